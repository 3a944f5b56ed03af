import CSodium
import LinuxIO

/// BLAKE2b-256 (libsodium's `crypto_generichash`, RFC 7693, unkeyed, 32-byte output; what
/// `b2sum -l 256` prints): the digest a signature covers when the signed data is large, so
/// the data is hashed once, as it is, and never re-serialised.
public enum BLAKE2b256 {
    /// The digest of `data` in lower-case hex (64 digits).
    public static func hex(of data: UnsafeRawBufferPointer) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        digest.withUnsafeMutableBytes { hash(data, into: $0) }
        return ProctorCrypto.hex(digest)
    }

    /// The digest of `data` in lower-case hex (64 digits).
    public static func hex(of data: ArraySlice<UInt8>) -> String {
        data.withUnsafeBytes { hex(of: $0) }
    }

    /// The digest of a **hash list** over `data`, in lower-case hex: `data` cut into consecutive
    /// `chunkSize`-byte chunks (the last one shorter, if the size is not a multiple; none if
    /// `data` is empty), the BLAKE2b-256 of each, and the BLAKE2b-256 of those 32-byte digests
    /// concatenated in order. The chunks are hashed side by side on every core
    /// (`WorkerPool.parallelFor`), so a large document costs a fraction of one pass on one core.
    /// Whoever relies on the result must also fix `data.count` and `chunkSize` (a signed
    /// header does): together they fix the list's shape, so a chunk moved, dropped or cut
    /// changes the result.
    public static func hashListHex(of data: UnsafeRawBufferPointer, chunkSize: Int) -> String {
        precondition(chunkSize > 0, "a chunk has at least one byte")
        let count = (data.count + chunkSize - 1) / chunkSize
        var digests = [UInt8](repeating: 0, count: count * 32)
        digests.withUnsafeMutableBytes { output in
            let job = ChunkJob(input: data, output: output, chunkSize: chunkSize)
            WorkerPool.shared.parallelFor(count) { job.hash(chunk: $0) }
        }
        return digests.withUnsafeBytes { hex(of: $0) }
    }

    /// `hashListHex(of:chunkSize:)` of `data`.
    public static func hashListHex(of data: ArraySlice<UInt8>, chunkSize: Int) -> String {
        data.withUnsafeBytes { hashListHex(of: $0, chunkSize: chunkSize) }
    }

    fileprivate static func hash(_ data: UnsafeRawBufferPointer, into digest: UnsafeMutableRawBufferPointer) {
        // sodium_init picks the fastest implementation for this CPU; without it the portable one
        // gives the same digest.
        _ = try? Sodium.ready()
        _ = crypto_generichash(mutableBytes(digest), digest.count, bytes(data), UInt64(data.count), nil, 0)
    }
}

/// The input and the digests of a hash list, shared by the threads hashing its chunks: each
/// reads its own chunk and writes only its own 32-byte slot, and `parallelFor` returns
/// after the last one, while both buffers are still alive.
private struct ChunkJob: @unchecked Sendable {
    let input: UnsafeRawBufferPointer
    let output: UnsafeMutableRawBufferPointer
    let chunkSize: Int

    func hash(chunk index: Int) {
        let start = index * chunkSize
        let chunk = UnsafeRawBufferPointer(rebasing: input[start..<min(start + chunkSize, input.count)])
        BLAKE2b256.hash(chunk, into: UnsafeMutableRawBufferPointer(rebasing: output[(index * 32)..<(index * 32 + 32)]))
    }
}
