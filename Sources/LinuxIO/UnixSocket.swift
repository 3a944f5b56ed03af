public import Glibc

/// Why a Unix socket could not be bound or reached; each case names the path.
public enum UnixSocketError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The path does not fit in a `sockaddr_un`.
    case pathTooLong(path: String, maximumBytes: Int)
    /// Another process is accepting connections on the path; it was left alone.
    case alreadyListening(path: String)
    /// Something that is not a socket exists at the path; it was left alone.
    case notASocket(path: String)
    /// Nothing accepts connections at the path (no file, or a stale socket).
    case notListening(path: String, errno: Errno)
    /// A system call failed; `operation` names it.
    case system(operation: String, path: String, errno: Errno)

    public var description: String {
        switch self {
        case .pathTooLong(let path, let maximum):
            "socket path \(path) is \(path.utf8.count) bytes long; a Unix socket path holds at most \(maximum)"
        case .alreadyListening(let path):
            "another process is already listening on \(path); refusing to replace its socket"
        case .notASocket(let path):
            "\(path) exists and is not a socket; refusing to replace it"
        case .notListening(let path, let errno):
            "nothing is listening at \(path): \(errno)"
        case .system(let operation, let path, let errno):
            "\(operation) \(path): \(errno)"
        }
    }
}

/// Unix stream sockets (AF_UNIX, SOCK_STREAM) bound to paths.
public enum UnixSocket {
    /// The longest socket path, in bytes, that Linux accepts.
    public static var maximumPathLength: Int { UnixSocketAddress.maximumPathLength }

    /// Binds and listens on `path`, returning a non-blocking, close-on-exec listening socket.
    ///
    /// - A socket file left by a crashed run (connecting to it is refused) is replaced.
    /// - A path where a process is listening is refused with `.alreadyListening`, and a path
    ///   holding anything but a socket with `.notASocket`; neither is touched.
    /// - The socket file gets `mode` and, when `group` names an existing group, that group; a
    ///   group that does not exist is skipped (ask `UserDatabase.groupID(named:)` to tell).
    ///   Both are set before `listen`, so no client can connect while the mode is still wider.
    public static func listen(path: String, mode: mode_t, group: String? = nil,
                              backlog: CInt = 512) throws(UnixSocketError) -> FileDescriptor {
        try checkLength(path)
        let socket: FileDescriptor
        do { socket = FileDescriptor(rawValue: try Syscall.unixStreamSocket(nonBlocking: true)) }
        catch { throw .system(operation: "socket for", path: path, errno: error) }
        do throws(UnixSocketError) {
            try bindReplacingStaleSocket(socket, path: path)
            try applyOwnership(path: path, mode: mode, group: group)
            do { try Syscall.listen(socket.rawValue, backlog: backlog) }
            catch { throw UnixSocketError.system(operation: "listen on", path: path, errno: error) }
            return socket
        } catch {
            try? socket.close()
            throw error
        }
    }

    /// Connects a blocking, close-on-exec stream socket to `path` (for clients).
    /// A missing file or a stale socket is `.notListening`.
    public static func connect(path: String) throws(UnixSocketError) -> FileDescriptor {
        try checkLength(path)
        let socket: FileDescriptor
        do { socket = FileDescriptor(rawValue: try Syscall.unixStreamSocket(nonBlocking: false)) }
        catch { throw .system(operation: "socket for", path: path, errno: error) }
        do {
            try Syscall.connect(socket.rawValue, unixPath: path)
            return socket
        } catch {
            try? socket.close()
            switch error {
            case .connectionRefused, .noSuchFileOrDirectory: throw .notListening(path: path, errno: error)
            default: throw .system(operation: "connect to", path: path, errno: error)
            }
        }
    }

    /// Accepts one pending connection as a non-blocking, close-on-exec socket;
    /// `.wouldBlock` when none is pending.
    public static func accept(on listener: FileDescriptor) throws(Errno) -> FileDescriptor {
        FileDescriptor(rawValue: try Syscall.acceptNonBlocking(listener.rawValue))
    }

    /// A connected pair of non-blocking, close-on-exec stream sockets (for tests and helpers).
    public static func pair() throws(Errno) -> (FileDescriptor, FileDescriptor) {
        let (first, second) = try Syscall.socketPair()
        return (FileDescriptor(rawValue: first), FileDescriptor(rawValue: second))
    }

    private static func checkLength(_ path: String) throws(UnixSocketError) {
        if path.utf8.count > maximumPathLength {
            throw .pathTooLong(path: path, maximumBytes: maximumPathLength)
        }
    }

    private static func bindReplacingStaleSocket(_ socket: FileDescriptor, path: String) throws(UnixSocketError) {
        do {
            try Syscall.bind(socket.rawValue, unixPath: path)
            return
        } catch .addressInUse {
            // Something exists at the path: replace it only if it is a socket nobody serves.
        } catch {
            throw .system(operation: "bind", path: path, errno: error)
        }
        let status: stat
        do { status = try Syscall.lstat(path) }
        catch { throw .system(operation: "lstat", path: path, errno: error) }
        guard status.st_mode & S_IFMT == S_IFSOCK else { throw .notASocket(path: path) }
        do throws(UnixSocketError) {
            let probe = try UnixSocket.connect(path: path)
            try? probe.close()
            throw UnixSocketError.alreadyListening(path: path)
        } catch .notListening {
            // A stale socket from a crashed run.
        } catch {
            throw error
        }
        do {
            try Syscall.unlink(path)
            try Syscall.bind(socket.rawValue, unixPath: path)
        } catch .addressInUse {
            // Another process bound the path between our unlink and bind: it won the race.
            throw .alreadyListening(path: path)
        } catch {
            throw .system(operation: "replace stale socket", path: path, errno: error)
        }
    }

    private static func applyOwnership(path: String, mode: mode_t, group: String?) throws(UnixSocketError) {
        do { try Syscall.chmod(path, mode) }
        catch { throw .system(operation: "chmod", path: path, errno: error) }
        guard let group else { return }
        let groupID: gid_t?
        do { groupID = try Syscall.groupID(named: group) }
        catch { throw .system(operation: "look up group \(group) for", path: path, errno: error) }
        guard let groupID else { return }
        do { try Syscall.chgrp(path, groupID) }
        catch { throw .system(operation: "chown to group \(group)", path: path, errno: error) }
    }
}
