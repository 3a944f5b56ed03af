import Glibc

/// A Linux error number, as a thrown error that reads well: `Errno.wouldBlock`,
/// `"Address already in use (EADDRINUSE)"`.
public struct Errno: Error, RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The raw `errno` value.
    public let rawValue: CInt

    /// Wraps a raw `errno` value.
    public init(rawValue: CInt) { self.rawValue = rawValue }

    /// The calling thread's current `errno`.
    public static var current: Errno { Errno(rawValue: errno) }

    /// EAGAIN/EWOULDBLOCK: a non-blocking call would have to wait.
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    /// EINTR: a blocking call was interrupted by a signal handler.
    public static let interrupted = Errno(rawValue: EINTR)
    /// EBADF: not an open descriptor (a bug in the caller).
    public static let badFileDescriptor = Errno(rawValue: EBADF)
    /// EPERM: the operation is not permitted.
    public static let notPermitted = Errno(rawValue: EPERM)
    /// EACCES: permission denied by file mode or policy.
    public static let permissionDenied = Errno(rawValue: EACCES)
    /// ENOENT: no such file or directory.
    public static let noSuchFileOrDirectory = Errno(rawValue: ENOENT)
    /// EEXIST: the file exists.
    public static let fileExists = Errno(rawValue: EEXIST)
    /// ENOSPC: no space left on the device.
    public static let noSpace = Errno(rawValue: ENOSPC)
    /// EROFS: the file system is read-only.
    public static let readOnlyFileSystem = Errno(rawValue: EROFS)
    /// EMFILE: this process has no descriptor left.
    public static let tooManyOpenFiles = Errno(rawValue: EMFILE)
    /// ENFILE: the system has no descriptor left.
    public static let tooManyOpenFilesInSystem = Errno(rawValue: ENFILE)
    /// ENAMETOOLONG: a path or name is too long.
    public static let nameTooLong = Errno(rawValue: ENAMETOOLONG)
    /// EPIPE: the peer closed its reading end.
    public static let brokenPipe = Errno(rawValue: EPIPE)
    /// ECONNRESET: the peer reset the connection.
    public static let connectionReset = Errno(rawValue: ECONNRESET)
    /// ECONNREFUSED: nothing is listening at the address.
    public static let connectionRefused = Errno(rawValue: ECONNREFUSED)
    /// ECONNABORTED: a pending connection was aborted before it was accepted.
    public static let connectionAborted = Errno(rawValue: ECONNABORTED)
    /// EADDRINUSE: the address is bound already.
    public static let addressInUse = Errno(rawValue: EADDRINUSE)
    /// ENOTSOCK: the descriptor or path is not a socket.
    public static let notSocket = Errno(rawValue: ENOTSOCK)
    /// EINVAL: an invalid argument.
    public static let invalidArgument = Errno(rawValue: EINVAL)
    /// ESRCH: no such process.
    public static let noSuchProcess = Errno(rawValue: ESRCH)
    /// ENOMEM: out of memory.
    public static let outOfMemory = Errno(rawValue: ENOMEM)
    /// ENOPROTOOPT: the socket option is unknown to this kernel.
    public static let noProtocolOption = Errno(rawValue: ENOPROTOOPT)

    /// The symbolic name (`EADDRINUSE`) when it is one of the named constants above.
    public var symbolicName: String? {
        switch rawValue {
        case EAGAIN: "EAGAIN"
        case EINTR: "EINTR"
        case EBADF: "EBADF"
        case EPERM: "EPERM"
        case EACCES: "EACCES"
        case ENOENT: "ENOENT"
        case EEXIST: "EEXIST"
        case ENOSPC: "ENOSPC"
        case EROFS: "EROFS"
        case EMFILE: "EMFILE"
        case ENFILE: "ENFILE"
        case ENAMETOOLONG: "ENAMETOOLONG"
        case EPIPE: "EPIPE"
        case ECONNRESET: "ECONNRESET"
        case ECONNREFUSED: "ECONNREFUSED"
        case ECONNABORTED: "ECONNABORTED"
        case EADDRINUSE: "EADDRINUSE"
        case ENOTSOCK: "ENOTSOCK"
        case EINVAL: "EINVAL"
        case ESRCH: "ESRCH"
        case ENOMEM: "ENOMEM"
        case ENOPROTOOPT: "ENOPROTOOPT"
        case EISDIR: "EISDIR"
        case ENOTDIR: "ENOTDIR"
        default: nil
        }
    }

    /// The C library's message with the symbolic name or number: `"Broken pipe (EPIPE)"`.
    public var description: String {
        // glibc's strerror is thread-safe since 2.32 (unknown numbers use a per-thread buffer).
        let message = String(cString: strerror(rawValue))
        return "\(message) (\(symbolicName ?? "errno \(rawValue)"))"
    }
}
