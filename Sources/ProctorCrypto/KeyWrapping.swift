import CSodium

/// Encrypts a data key under a wrapping key (XChaCha20-Poly1305, IETF AEAD, random 192-bit nonce)
/// so it can be stored beside the data it protects. The wrapped form is bound to a context string
/// (say `"app=com.example.notes uid=1000"`) as associated data: unwrapping it under another context
/// fails, so a wrapped key copied to another app's or user's record is useless.
///
/// Layout: version (1 byte, 1) ‖ nonce (24) ‖ ciphertext of the key (32) ‖ tag (16).
public enum KeyWrapping {
    static let version: UInt8 = 1
    static let nonceSize = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
    static let tagSize = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)
    /// The size of a wrapped key in bytes (73).
    public static let wrappedByteCount = 1 + nonceSize + SymmetricKey.byteCount + tagSize

    /// `key` encrypted under `wrappingKey`, bound to `context`.
    public static func wrap(_ key: SymmetricKey, with wrappingKey: SymmetricKey, context: String) throws(CryptoError) -> [UInt8] {
        try Sodium.ready()
        var wrapped = [UInt8](repeating: 0, count: wrappedByteCount)
        wrapped[0] = version
        let associated = associatedData(context)
        wrapped.withUnsafeMutableBytes { out in
            let nonce = UnsafeMutableRawBufferPointer(rebasing: out[1..<(1 + nonceSize)])
            randombytes_buf(mutableBytes(nonce), nonce.count)
            let sealed = UnsafeMutableRawBufferPointer(rebasing: out[(1 + nonceSize)...])
            associated.withUnsafeBytes { ad in
                _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                    mutableBytes(sealed), nil, bytes(key.storage.bytes), UInt64(SymmetricKey.byteCount),
                    bytes(ad), UInt64(ad.count), nil, bytes(UnsafeRawBufferPointer(nonce)), bytes(wrappingKey.storage.bytes))
            }
        }
        return wrapped
    }

    /// The key inside `wrapped`; `.authenticationFailed` when it was altered, wrapped under
    /// another key, or bound to another context.
    public static func unwrap(_ wrapped: [UInt8], with wrappingKey: SymmetricKey, context: String) throws(CryptoError) -> SymmetricKey {
        try Sodium.ready()
        guard wrapped.count == wrappedByteCount else {
            throw .wrongLength(what: "a wrapped key", expected: wrappedByteCount, actual: wrapped.count)
        }
        guard wrapped[0] == version else {
            throw .malformedKey(source: "wrapped key", reason: "unknown version \(wrapped[0]), expected \(version)")
        }
        let associated = associatedData(context)
        let storage = try wrapped.withUnsafeBytes { input in Result { () throws(CryptoError) in
            try LockedBytes(count: SymmetricKey.byteCount) { (out) throws(CryptoError) in
                let nonce = UnsafeRawBufferPointer(rebasing: input[1..<(1 + nonceSize)])
                let sealed = UnsafeRawBufferPointer(rebasing: input[(1 + nonceSize)...])
                let status = associated.withUnsafeBytes { ad in
                    crypto_aead_xchacha20poly1305_ietf_decrypt(
                        mutableBytes(out), nil, nil, bytes(sealed), UInt64(sealed.count),
                        bytes(ad), UInt64(ad.count), bytes(nonce), bytes(wrappingKey.storage.bytes))
                }
                guard status == 0 else { throw .authenticationFailed(what: "the wrapped key") }
            }
        } }.get()
        return SymmetricKey(storage: storage)
    }

    /// A label for this use, the format version, then the caller's context.
    private static func associatedData(_ context: String) -> [UInt8] {
        Array("proctor.key-wrap\0".utf8) + [version] + Array(context.utf8)
    }
}
