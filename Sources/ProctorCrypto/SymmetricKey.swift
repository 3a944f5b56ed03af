import CSodium

/// A 256-bit secret key for authenticated encryption. Its bytes live in locked memory that is
/// zeroed when the last copy of the key goes away; they never appear in a description.
public struct SymmetricKey: Sendable, CustomStringConvertible {
    /// The key's size in bytes (32).
    public static let byteCount = 32

    let storage: LockedBytes

    /// A fresh random key.
    public static func random() throws(CryptoError) -> SymmetricKey {
        try Sodium.ready()
        return SymmetricKey(storage: LockedBytes(count: byteCount) { randombytes_buf(mutableBytes($0), $0.count) })
    }

    /// A key holding a copy of `bytes`, which must be exactly 32 bytes.
    public init(copying bytes: UnsafeRawBufferPointer) throws(CryptoError) {
        guard bytes.count == Self.byteCount else {
            throw .wrongLength(what: "a symmetric key", expected: Self.byteCount, actual: bytes.count)
        }
        storage = LockedBytes(count: Self.byteCount) { $0.copyMemory(from: bytes) }
    }

    /// A key holding a copy of `bytes`, which must be exactly 32 bytes.
    public init(copying bytes: [UInt8]) throws(CryptoError) {
        let result = bytes.withUnsafeBytes { raw in Result { () throws(CryptoError) in try SymmetricKey(copying: raw) } }
        self = try result.get()
    }

    init(storage: LockedBytes) { self.storage = storage }

    /// Calls `body` with the key's bytes, valid only during the call. For handing the key to
    /// another trusted store (the kernel keyring, a key-wrapping step); never log them.
    public func withUnsafeBytes<Result, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> Result) throws(E) -> Result {
        try body(storage.bytes)
    }

    /// A short public identifier of this key (16 hex digits): BLAKE2b keyed with the key over a
    /// fixed label, so it names the key (which generation wrote a file) without revealing it.
    public var keyID: String {
        var digest = [UInt8](repeating: 0, count: 8)
        let label = Array("proctor.key-id.v1".utf8)
        digest.withUnsafeMutableBytes { out in
            label.withUnsafeBytes { input in
                _ = crypto_generichash(mutableBytes(out), out.count, bytes(input), UInt64(input.count),
                                       bytes(storage.bytes), storage.bytes.count)
            }
        }
        return hex(digest)
    }

    public var description: String { "SymmetricKey(id: \(keyID))" }
}
