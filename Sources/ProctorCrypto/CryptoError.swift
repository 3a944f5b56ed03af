public import LinuxIO

/// Why a cryptographic operation failed. Each case says what was being checked and, for key
/// files, which file; none carries key material.
public enum CryptoError: Error, Hashable, Sendable, CustomStringConvertible {
    /// libsodium could not initialise (no usable randomness source): nothing can be done safely.
    case libraryUnavailable
    /// A key, nonce, header or signature had the wrong size.
    case wrongLength(what: String, expected: Int, actual: Int)
    /// Key text (a key file's line) is not in the expected format; `source` is the file or
    /// "public key text".
    case malformedKey(source: String, reason: String)
    /// The key id written beside a key does not belong to that key.
    case keyIDMismatch(source: String, stated: String, actual: String)
    /// A key file could not be read or written.
    case keyFile(path: String, operation: String, errno: Errno)
    /// A private key file can be read by other users (group or other permission bits set).
    case insecureKeyFilePermissions(path: String, mode: UInt32)
    /// A signature does not verify with the key `keyID`: the data or the signature was altered,
    /// or another key signed it.
    case signatureMismatch(keyID: String)
    /// Authenticated decryption failed for `what`: the bytes were altered, reordered, or sealed
    /// with another key or associated data.
    case authenticationFailed(what: String)
    /// A stream ended before its final chunk: it was truncated.
    case truncatedStream(chunksRead: Int)
    /// A chunk followed the final chunk of a stream.
    case dataAfterFinalChunk
    /// A stream chunk carried a tag this module never writes.
    case unexpectedStreamTag(UInt8)

    public var description: String {
        switch self {
        case .libraryUnavailable:
            "libsodium could not be initialised (no randomness source?)"
        case .wrongLength(let what, let expected, let actual):
            "\(what) must be \(expected) bytes, got \(actual)"
        case .malformedKey(let source, let reason):
            "\(source): \(reason)"
        case .keyIDMismatch(let source, let stated, let actual):
            "\(source): the key id \(stated) does not match the key (its id is \(actual))"
        case .keyFile(let path, let operation, let errno):
            "\(operation) \(path): \(errno)"
        case .insecureKeyFilePermissions(let path, let mode):
            "\(path): a private key must not be readable by others (mode \(String(mode & 0o7777, radix: 8)), expected 600)"
        case .signatureMismatch(let keyID):
            "the signature does not verify with key \(keyID)"
        case .authenticationFailed(let what):
            "\(what) failed authentication: altered, reordered or sealed with another key"
        case .truncatedStream(let chunks):
            "the stream ends after \(chunks) chunk(s) without its final chunk: truncated"
        case .dataAfterFinalChunk:
            "data follows the stream's final chunk"
        case .unexpectedStreamTag(let tag):
            "a stream chunk carries the unexpected tag \(tag)"
        }
    }
}
