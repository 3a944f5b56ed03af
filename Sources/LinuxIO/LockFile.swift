public import Glibc

/// Why a lock file could not be taken.
public enum LockFileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Another open of the file holds the lock; `holderPID` is the process id it recorded, when
    /// the file holds one.
    case alreadyLocked(path: String, holderPID: pid_t?)
    /// A system call failed; `operation` names it.
    case system(operation: String, path: String, errno: Errno)

    public var description: String {
        switch self {
        case .alreadyLocked(let path, let holder?):
            "\(path) is locked by process \(holder); is another instance running on this directory?"
        case .alreadyLocked(let path, nil):
            "\(path) is locked by another process; is another instance running on this directory?"
        case .system(let operation, let path, let errno):
            "\(operation) \(path): \(errno)"
        }
    }
}

/// An exclusive `flock` on a file, held for as long as this object lives, recording the
/// holder's process id in the file.
///
/// `flock` locks belong to an open file description: a second `acquire` of the same path fails
/// even inside the same process, and the kernel drops the lock when the process dies, so a
/// crashed holder never leaves a stale lock behind.
public final class LockFile {
    /// The locked file's path.
    public let path: String
    private let descriptor: FileDescriptor

    private init(path: String, descriptor: FileDescriptor) {
        self.path = path
        self.descriptor = descriptor
    }

    /// Creates `path` if needed (mode 0644), locks it without waiting and writes this process's
    /// id into it; `.alreadyLocked` when another open of the file holds the lock.
    public static func acquire(path: String) throws(LockFileError) -> LockFile {
        let descriptor: FileDescriptor
        do { descriptor = try FileDescriptor.open(path, O_RDWR | O_CREAT, mode: 0o644) }
        catch { throw .system(operation: "open", path: path, errno: error) }
        do {
            try Syscall.flock(descriptor.rawValue, LOCK_EX | LOCK_NB)
        } catch {
            let holder = error == .wouldBlock ? recordedPID(in: descriptor) : nil
            try? descriptor.close()
            if error == .wouldBlock { throw .alreadyLocked(path: path, holderPID: holder) }
            throw .system(operation: "flock", path: path, errno: error)
        }
        do {
            try Syscall.ftruncate(descriptor.rawValue, 0)
            try descriptor.writeAll("\(Syscall.processID())\n".utf8)
        } catch {
            try? descriptor.close()
            throw .system(operation: "write the process id into", path: path, errno: error)
        }
        return LockFile(path: path, descriptor: descriptor)
    }

    deinit {
        // Closing the only descriptor of this open file description releases the lock.
        try? descriptor.close()
    }

    private static func recordedPID(in descriptor: FileDescriptor) -> pid_t? {
        var bytes = [UInt8](repeating: 0, count: 32)
        guard let count = try? bytes.withUnsafeMutableBytes({ raw in
            Result { () throws(Errno) in try descriptor.read(into: raw) }
        }).get() else { return nil }
        let text = String(decoding: bytes[..<count], as: UTF8.self)
        guard let pid = pid_t(text.prefix { $0 != "\n" }), pid > 0 else { return nil }
        return pid
    }
}
