import CSodium

/// BLAKE2b-256 (libsodium's `crypto_generichash`, RFC 7693, unkeyed, 32-byte output; what
/// `b2sum -l 256` prints): the digest a signature covers when the signed data is large, so
/// the data is hashed once, as it is, and never re-serialised.
public enum BLAKE2b256 {
    /// The digest of `data` in lower-case hex (64 digits).
    public static func hex(of data: UnsafeRawBufferPointer) -> String {
        // sodium_init picks the fastest implementation for this CPU; without it the portable one
        // gives the same digest.
        _ = try? Sodium.ready()
        var digest = [UInt8](repeating: 0, count: 32)
        digest.withUnsafeMutableBytes { out in
            _ = crypto_generichash(mutableBytes(out), out.count, bytes(data), UInt64(data.count), nil, 0)
        }
        return ProctorCrypto.hex(digest)
    }

    /// The digest of `data` in lower-case hex (64 digits).
    public static func hex(of data: ArraySlice<UInt8>) -> String {
        data.withUnsafeBytes { hex(of: $0) }
    }
}
