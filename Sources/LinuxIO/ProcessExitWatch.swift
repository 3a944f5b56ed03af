import CLinux
import Glibc

/// Says whether processes were still alive after a given read of one event loop's
/// connections (`SenderCredentials.receipt`): for any number of processes, one `epoll_wait`
/// answers for every read made before it. Asking each process's pidfd instead
/// (`ProcessHandle.isAlive`) is a `ppoll` per process and read, and a `ppoll` of one pidfd
/// costs about twice an `epoll_wait` that finds nothing ready (≈ 235 against ≈ 120 ns here):
/// proctord asks it of a session's process on every call.
///
/// How: the watched pidfds sit on an epoll instance of their own. The kernel makes a pidfd
/// readable, which queues it there, when its process exits — before the process is reaped
/// and its pid can go to another process. So when an `epoll_wait` after read N does not
/// report a process, that process held its pid while everything up to read N was written,
/// and a message of those reads stamped with that pid is its own. An exited process stays
/// exited: it is taken off the instance once seen.
///
/// Why the instance is the watch's own, looked at after the read, and not the loop's: an
/// `epoll_wait` splices the ready list before it polls each item, and a wake-up meanwhile
/// waits on an overflow list until the call ends. On the loop's instance a pidfd could fire
/// in that window while the socket, polled later in the same batch, showed data written after
/// the exit. Here only this watch's own `epoll_wait` scans, so by the time the next one begins
/// every exit notified before it sits on the ready list.
///
/// Threading: the loop's thread only (the reads it numbers are counted there).
public final class ProcessExitWatch {
    /// The epoll instance (internal so tests can read what it watches in /proc/self/fdinfo).
    let epoll: FileDescriptor
    private let loop: EventLoop
    /// The loop's read count when the last `epoll_wait` began: those reads came before it.
    private var checkedThroughReceipt: UInt64 = 0
    private let events: UnsafeMutablePointer<epoll_event>
    private static let eventCapacity = 16

    /// A watch for reads numbered by `loop` (`SenderCredentials.receipt`).
    public init(loop: EventLoop) throws(Errno) {
        epoll = FileDescriptor(rawValue: try Syscall.epollCreate())
        self.loop = loop
        events = .allocate(capacity: Self.eventCapacity)
    }

    deinit {
        try? epoll.close()
        events.deallocate()
    }

    /// Watches `process` from now on (nothing when it is watched already). Fails when the
    /// kernel refuses to watch one more descriptor (`fs.epoll.max_user_watches`); the
    /// process is then asked on its pidfd, at a `ppoll` a read.
    public func watch(_ process: ProcessHandle) throws(Errno) {
        guard process.exitWatch == nil else { return }
        try Syscall.epollControl(epoll.rawValue, EPOLL_CTL_ADD, process.descriptor.rawValue,
                                 events: EPOLLIN.rawValue, data: Self.token(for: process))
        process.exitWatch = self
    }

    /// Whether `process`, watched here, had not exited after the read numbered `receipt`
    /// (0: unknown, so after every read so far).
    func wasAlive(_ process: ProcessHandle, afterReceipt receipt: UInt64) -> Bool {
        if process.exitSeen { return false }
        if receipt != 0, receipt <= checkedThroughReceipt { return true }
        guard lookForExits() else { return (try? process.isAlive) == true }
        return !process.exitSeen
    }

    /// Stops watching `process` (its pidfd is about to be closed).
    func forget(_ process: ProcessHandle) {
        guard !process.exitSeen else { return }
        // Fails only if the descriptor was closed already, which took it off.
        try? Syscall.epollControl(epoll.rawValue, EPOLL_CTL_DEL, process.descriptor.rawValue, events: 0, data: 0)
    }

    /// Marks every watched process that has exited; false if the kernel would not say.
    private func lookForExits() -> Bool {
        let through = loop.readsReceived
        while true {
            let count: Int
            do {
                count = try Syscall.epollWaitReady(epoll.rawValue, events, capacity: CInt(Self.eventCapacity))
            } catch {
                return false
            }
            for index in 0..<count {
                // The pointer is live: a handle leaves the instance before its deinit ends
                // (`forget`), and nothing ran on this thread since the kernel reported it.
                let process = Unmanaged<ProcessHandle>.fromOpaque(UnsafeRawPointer(bitPattern: UInt(events[index].data.u64))!)
                    .takeUnretainedValue()
                forget(process)
                process.exitSeen = true
            }
            if count < Self.eventCapacity { break }
        }
        checkedThroughReceipt = through
        return true
    }

    private static func token(for process: ProcessHandle) -> UInt64 {
        UInt64(UInt(bitPattern: Unmanaged.passUnretained(process).toOpaque()))
    }
}
