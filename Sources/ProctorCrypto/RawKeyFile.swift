import CSodium
import Glibc

extension SymmetricKey {
    /// Reads a key file holding exactly the key's 32 raw bytes — proctord's machine key, either
    /// its 0600 file in the state directory or the plaintext systemd hands a service from an
    /// encrypted credential (`LoadCredentialEncrypted=`). Refuses a file that group or others
    /// may read or write, or of any other size.
    public static func read(rawKeyFile path: String) throws(CryptoError) -> SymmetricKey {
        var contents = try KeyFile.read(path, privateKey: true)
        defer { wipe(&contents) }
        guard contents.count == byteCount else {
            throw .malformedKey(source: path, reason: "expected exactly \(byteCount) raw bytes, found \(contents.count)")
        }
        return try SymmetricKey(copying: contents)
    }

    /// Creates `path` (mode 0600, `O_EXCL`, flushed) holding a fresh random key's raw bytes.
    /// Fails if the file exists: an existing key is never overwritten.
    public static func createRawKeyFile(_ path: String) throws(CryptoError) -> SymmetricKey {
        let key = try random()
        var contents = Array(key.storage.bytes)
        defer { wipe(&contents) }
        try KeyFile.create(path, contents: contents, mode: 0o600)
        return key
    }

    /// The key in standard Base64, for handing it to its one legitimate holder over an
    /// authenticated local channel (proctord to the app). The string is ordinary memory:
    /// drop it as soon as the key is rebuilt with `init(base64:)`; never log it.
    public var base64ForTransfer: String { base64(storage.bytes) }

    /// A key from its Base64 transfer form; the text must decode to exactly 32 bytes.
    public init(base64 text: String) throws(CryptoError) {
        try Sodium.ready()
        let storage = try LockedBytes(count: Self.byteCount) { (output: UnsafeMutableRawBufferPointer) throws(CryptoError) in
            var characters = Array(text.utf8)
            defer { wipe(&characters) }
            let decoded = characters.withUnsafeBytes { decodeBase64($0, into: output) }
            guard decoded else { throw CryptoError.malformedKey(source: "a transferred key", reason: "not Base64 of \(Self.byteCount) bytes") }
        }
        self.init(storage: storage)
    }
}
