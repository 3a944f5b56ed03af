public import Glibc

/// A pidfd: a reference to one process that, unlike a pid, can never come to mean another
/// process once this one has exited. Closed when the last reference goes.
///
/// Use it for polkit-style checks (CVE-2013-4288): read what you need about `pid` from
/// `/proc/PID/…` (its executable, its groups), then confirm with `isAlive` that the process
/// behind the handle still lives. If it does, the pid was not reused in between, so what was
/// read belongs to this process.
public final class ProcessHandle: @unchecked Sendable, Hashable, CustomStringConvertible {
    /// The pidfd (close-on-exec), owned by the handle.
    public let descriptor: FileDescriptor
    /// The process id in this process's pid namespace, as the kernel reported it with the pidfd.
    public let pid: pid_t

    /// The watch that tells when this process exits (`ProcessExitWatch.watch(_:)`), if any.
    var exitWatch: ProcessExitWatch?
    /// Set by `exitWatch` once it saw the process exit.
    var exitSeen = false
    /// Unwatched: the read (`SenderCredentials.receipt`) after which the pidfd last said the
    /// process was alive.
    private var aliveAfterReceipt: UInt64 = 0

    /// Takes ownership of `descriptor`, a pidfd for `pid`.
    public init(adopting descriptor: FileDescriptor, pid: pid_t) {
        self.descriptor = descriptor
        self.pid = pid
    }

    /// A handle on the running process `pid` (`pidfd_open(2)`); `.noSuchProcess` when there is none.
    public static func open(pid: pid_t) throws(Errno) -> ProcessHandle {
        ProcessHandle(adopting: FileDescriptor(rawValue: try Syscall.pidFDOpen(pid)), pid: pid)
    }

    deinit {
        exitWatch?.forget(self)
        try? descriptor.close()
    }

    /// Whether the process has not exited yet (the pidfd is not readable). A zombie that has
    /// exited but was not reaped counts as gone.
    public var isAlive: Bool {
        get throws(Errno) { try !Syscall.pidFDHasExited(descriptor.rawValue) }
    }

    /// Whether the process had not exited after the read numbered `receipt` (0: unknown, so
    /// after every read so far): then it held its pid when the bytes of that read and of the
    /// reads before it were written. Asked of its `exitWatch`, which answers for many reads
    /// and processes at once; else of the pidfd, which it need not be again for reads up to
    /// one it said so after.
    ///
    /// On the thread of the event loop that numbered the reads, as are this handle's last
    /// release once watched.
    public func wasAlive(afterReceipt receipt: UInt64) -> Bool {
        if let exitWatch { return exitWatch.wasAlive(self, afterReceipt: receipt) }
        if receipt != 0, receipt <= aliveAfterReceipt { return true }
        guard (try? isAlive) == true else { return false }
        aliveAfterReceipt = max(aliveAfterReceipt, receipt)
        return true
    }

    /// Whether both handles refer to the same process. On kernels with pidfs (6.9+) every
    /// process has an inode of its own, so this holds even across pid reuse; on older ones
    /// it compares the pids.
    public func refersToSameProcess(as other: ProcessHandle) -> Bool {
        guard pid == other.pid else { return false }
        guard let mine = try? Syscall.fstat(descriptor.rawValue),
              let theirs = try? Syscall.fstat(other.descriptor.rawValue) else { return true }
        return mine.st_dev != theirs.st_dev || mine.st_ino == theirs.st_ino
    }

    /// Handles are equal when they are the same handle (see `refersToSameProcess(as:)`).
    public static func == (lhs: ProcessHandle, rhs: ProcessHandle) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    public var description: String { "process \(pid) (pidfd \(descriptor.rawValue))" }
}
