public import Glibc

/// Who is at the other end of a connected Unix socket, as the kernel recorded it when the peer
/// called `connect` (SO_PEERCRED): it cannot be forged by the peer.
///
/// These name the process that *connected*. A connection can be handed on (fork, exec,
/// descriptor passing), so for a decision about who sends a given message use the
/// per-message `SenderCredentials` instead.
public struct PeerCredentials: Hashable, Sendable, CustomStringConvertible {
    /// The peer's process id at connect time.
    public let pid: pid_t
    /// The peer's effective user id at connect time.
    public let uid: uid_t
    /// The peer's effective group id at connect time.
    public let gid: gid_t

    /// Credentials with the given ids.
    public init(pid: pid_t, uid: uid_t, gid: gid_t) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    /// The credentials of the peer of the connected Unix socket `socket`.
    public static func of(_ socket: FileDescriptor) throws(Errno) -> PeerCredentials {
        let (pid, uid, gid) = try Syscall.peerCredentials(socket.rawValue)
        return PeerCredentials(pid: pid, uid: uid, gid: gid)
    }

    /// A pidfd for the process that connected (SO_PEERPIDFD, kernel 6.5+); nil where the
    /// kernel does not offer it.
    public static func processHandle(of socket: FileDescriptor) throws(Errno) -> ProcessHandle? {
        let (pid, _, _) = try Syscall.peerCredentials(socket.rawValue)
        do {
            return ProcessHandle(adopting: FileDescriptor(rawValue: try Syscall.peerPidFD(socket.rawValue)), pid: pid)
        } catch .invalidArgument, .noProtocolOption {
            return nil
        }
    }

    public var description: String { "pid \(pid) uid \(uid) gid \(gid)" }
}

/// Who sent some bytes on a Unix stream socket, stamped by the kernel on each message
/// (SCM_CREDENTIALS, and SCM_PIDFD where the kernel has it): unlike `PeerCredentials`, these
/// name the process that wrote the bytes, even when the connection was handed on after
/// `connect`. The pid and ids are those of the sender at the moment it wrote.
public struct SenderCredentials: Hashable, Sendable, CustomStringConvertible {
    /// The sender's process id (in this process's pid namespace).
    public let pid: pid_t
    /// The sender's effective user id.
    public let uid: uid_t
    /// The sender's effective group id.
    public let gid: gid_t
    /// A pidfd for the sender (kernel 6.5+), to confirm it is still the same live process
    /// after reading `/proc/PID/…`; nil where the kernel has no SO_PASSPIDFD or the
    /// receiver turned it off (`StreamConnection.receiveSenderProcesses(_:)`).
    public let process: ProcessHandle?
    /// Which read brought the bytes: an `EventLoop` numbers the reads of all its connections
    /// from 1 as they come, so a later read has a larger number; 0 when unknown. The sender
    /// wrote them before that read: a process known to be alive after it held the pid when
    /// they were written (`ProcessHandle.wasAlive(afterReceipt:)`). A number, not the time of
    /// the read: the order is all a receiver needs, and numbering the reads reads no clock.
    public let receipt: UInt64

    public init(pid: pid_t, uid: uid_t, gid: gid_t, process: ProcessHandle? = nil, receipt: UInt64 = 0) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.process = process
        self.receipt = receipt
    }

    /// Whether both name the same process with the same ids (pidfds compared where both have one).
    public func isSameSender(as other: SenderCredentials) -> Bool {
        guard pid == other.pid, uid == other.uid, gid == other.gid else { return false }
        guard let process, let otherProcess = other.process else { return true }
        return process.refersToSameProcess(as: otherProcess)
    }

    public var description: String { "pid \(pid) uid \(uid) gid \(gid)" }
}
