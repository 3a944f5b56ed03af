import Glibc
import LinuxIO

/// Reading and creating small key files, with the errors naming the file.
enum KeyFile {
    /// Key files are one short line; anything longer is not a key file.
    static let maximumSize = 4096

    /// The file's bytes (at most `maximumSize`). With `privateKey`, refuses a file whose mode lets
    /// group or others read or write it.
    static func read(_ path: String, privateKey: Bool = false) throws(CryptoError) -> [UInt8] {
        let descriptor: FileDescriptor
        do { descriptor = try FileDescriptor.open(path, O_RDONLY) }
        catch { throw .keyFile(path: path, operation: "open", errno: error) }
        defer { try? descriptor.close() }
        if privateKey {
            var status = stat()
            guard fstat(descriptor.rawValue, &status) == 0 else { throw .keyFile(path: path, operation: "stat", errno: .current) }
            guard status.st_mode & 0o077 == 0 else { throw .insecureKeyFilePermissions(path: path, mode: status.st_mode) }
        }
        // No copy of a key lingers: readAll zeroes what it refuses, and below 64 KiB the array it
        // returns is the one it read into.
        do { return try descriptor.readAll(limit: maximumSize) } catch {
            switch error {
            case .limitExceeded: throw .malformedKey(source: path, reason: "larger than \(maximumSize) bytes: not a key file")
            case .read(let errno): throw .keyFile(path: path, operation: "read", errno: errno)
            }
        }
    }

    /// Creates `path` with `contents` and `mode`, flushed to disk; fails if the file exists, so a
    /// key is never overwritten by accident. A partly written file is removed.
    static func create(_ path: String, contents: [UInt8], mode: mode_t) throws(CryptoError) {
        let descriptor: FileDescriptor
        do { descriptor = try FileDescriptor.open(path, O_WRONLY | O_CREAT | O_EXCL, mode: mode) }
        catch { throw .keyFile(path: path, operation: "create", errno: error) }
        do throws(Errno) {
            defer { try? descriptor.close() }
            // The mode is given before the umask; make it exact (a 0600 key must stay 0600).
            guard fchmod(descriptor.rawValue, mode) == 0 else { throw Errno.current }
            try descriptor.writeAll(contents)
            guard fsync(descriptor.rawValue) == 0 else { throw Errno.current }
        } catch {
            unlink(path)
            throw .keyFile(path: path, operation: "write", errno: error)
        }
    }
}
