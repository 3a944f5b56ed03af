import LinuxIO
public import ProctorCrypto

/// Why protected storage could not do what was asked. Every case names the file; none carries
/// the file's content or key material.
public enum ProtectedStorageError: Error, Hashable, Sendable, CustomStringConvertible {
    /// `ProtectedStorage.shared` was used before it was configured with a directory and a key source.
    case notConfigured
    /// The name cannot be a protected file's name (`reason` says why).
    case invalidName(String, reason: String)
    /// No protected file has this name.
    case noSuchFile(String)
    /// The key source could not supply the data key.
    case keyUnavailable(reason: String)
    /// A file operation failed; `errno` is the raw error number.
    case system(operation: String, path: String, errno: Int32)
    /// The file does not start with the protected-file header: it was not written by ProtectedStorage.
    case notAProtectedFile(String)
    /// The file's format version is one this SDK does not read.
    case unsupportedVersion(String, version: UInt8)
    /// The file was encrypted under another key (an earlier key, destroyed by a wipe, or
    /// another app's): it cannot be read.
    case encryptedWithAnotherKey(String, fileKeyID: String, currentKeyID: String)
    /// The file's content failed authentication: it was altered, truncated or replaced on disk.
    case damaged(String, CryptoError)

    public var description: String {
        switch self {
        case .notConfigured:
            "protected storage is not configured (no data directory or key source yet)"
        case .invalidName(let name, let reason):
            "\"\(name)\" is not a valid protected file name: \(reason)"
        case .noSuchFile(let name):
            "no protected file named \"\(name)\""
        case .keyUnavailable(let reason):
            "the protected storage key is unavailable: \(reason)"
        case .system(let operation, let path, let errno):
            "\(operation) \(path): \(Errno(rawValue: errno))"
        case .notAProtectedFile(let name):
            "protected file \"\(name)\" does not start with the protected-file header"
        case .unsupportedVersion(let name, let version):
            "protected file \"\(name)\" has format version \(version), which this SDK does not read"
        case .encryptedWithAnotherKey(let name, let fileKeyID, let currentKeyID):
            "protected file \"\(name)\" was encrypted with key \(fileKeyID), not the current key \(currentKeyID)"
        case .damaged(let name, let cause):
            "protected file \"\(name)\" is damaged and was not read: \(cause)"
        }
    }
}
