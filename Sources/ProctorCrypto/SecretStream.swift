import CSodium

/// The sizes of libsodium's `crypto_secretstream_xchacha20poly1305`, the construction behind
/// `SecretStreamSealer` and `SecretStreamOpener`: a stream of chunks, each encrypted and
/// authenticated (XChaCha20-Poly1305) with a key and nonce that advance chunk by chunk, so a
/// chunk removed, repeated or moved fails to open, and a stream cut short lacks its final tag.
public enum SecretStream {
    /// The stream header's size (24 bytes): stored once, before the first chunk.
    public static let headerSize = Int(crypto_secretstream_xchacha20poly1305_HEADERBYTES)
    /// Bytes a sealed chunk adds to its plaintext (17: a tag byte and a 16-byte MAC).
    public static let chunkOverhead = Int(crypto_secretstream_xchacha20poly1305_ABYTES)

    static let messageTag = UInt8(crypto_secretstream_xchacha20poly1305_TAG_MESSAGE)
    static let finalTag = UInt8(crypto_secretstream_xchacha20poly1305_TAG_FINAL)
}

/// The state libsodium advances chunk by chunk, kept off the Swift heap's copies and zeroed when
/// the stream is done with it.
private final class StreamState {
    let pointer = UnsafeMutablePointer<crypto_secretstream_xchacha20poly1305_state>.allocate(capacity: 1)
    deinit {
        sodium_memzero(pointer, MemoryLayout<crypto_secretstream_xchacha20poly1305_state>.size)
        pointer.deallocate()
    }
}

/// Encrypts a stream chunk by chunk under one key. The last chunk must be sealed with
/// `isFinal: true`; an opener that never sees it reports the stream truncated.
public final class SecretStreamSealer {
    /// The header to store before the first chunk (it holds the stream's random nonce).
    public let header: [UInt8]
    private let state: StreamState
    /// Whether the final chunk has been sealed; no chunk may follow it.
    public private(set) var isFinished = false

    /// Starts a stream under `key` with a fresh random nonce.
    public init(key: SymmetricKey) throws(CryptoError) {
        try Sodium.ready()
        let state = StreamState()
        var header = [UInt8](repeating: 0, count: SecretStream.headerSize)
        header.withUnsafeMutableBytes { out in
            _ = crypto_secretstream_xchacha20poly1305_init_push(state.pointer, mutableBytes(out), bytes(key.storage.bytes))
        }
        self.header = header
        self.state = state
    }

    /// Seals `plaintext` as the next chunk into `output`, which must have room for
    /// `plaintext.count + SecretStream.chunkOverhead` bytes; returns the bytes written.
    /// `associatedData` is authenticated with the chunk, not stored.
    public func seal(_ plaintext: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer, isFinal: Bool,
                     into output: UnsafeMutableRawBufferPointer) -> Int {
        precondition(!isFinished, "a chunk sealed after the final one")
        precondition(output.count >= plaintext.count + SecretStream.chunkOverhead, "the output buffer is too small")
        var written: UInt64 = 0
        _ = crypto_secretstream_xchacha20poly1305_push(
            state.pointer, mutableBytes(output), &written, bytes(plaintext), UInt64(plaintext.count),
            bytes(associatedData), UInt64(associatedData.count), isFinal ? SecretStream.finalTag : SecretStream.messageTag)
        isFinished = isFinal
        return Int(written)
    }

    /// Seals `plaintext` as the next chunk and returns it.
    public func seal(_ plaintext: [UInt8], associatedData: [UInt8] = [], isFinal: Bool) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: plaintext.count + SecretStream.chunkOverhead)
        output.withUnsafeMutableBytes { out in
            plaintext.withUnsafeBytes { input in
                associatedData.withUnsafeBytes { ad in _ = seal(input, associatedData: ad, isFinal: isFinal, into: out) }
            }
        }
        return output
    }
}

/// Decrypts and authenticates a stream sealed by `SecretStreamSealer`, chunk by chunk, in order.
/// Call `finish()` at the end of the input: it fails unless the final chunk was opened.
public final class SecretStreamOpener {
    private let state = StreamState()
    private var chunksOpened = 0
    /// Whether the final chunk has been opened.
    public private(set) var isFinished = false

    /// Starts opening the stream whose header is `header`, under `key`.
    public init(key: SymmetricKey, header: UnsafeRawBufferPointer) throws(CryptoError) {
        try Self.start(state, key: key, header: header)
    }

    /// Starts opening the stream whose header is `header`, under `key`.
    public init(key: SymmetricKey, header: [UInt8]) throws(CryptoError) {
        let state = self.state
        try header.withUnsafeBytes { raw in Result { () throws(CryptoError) in try Self.start(state, key: key, header: raw) } }.get()
    }

    private static func start(_ state: StreamState, key: SymmetricKey, header: UnsafeRawBufferPointer) throws(CryptoError) {
        try Sodium.ready()
        guard header.count == SecretStream.headerSize else {
            throw .wrongLength(what: "a stream header", expected: SecretStream.headerSize, actual: header.count)
        }
        guard crypto_secretstream_xchacha20poly1305_init_pull(state.pointer, bytes(header), bytes(key.storage.bytes)) == 0 else {
            throw .authenticationFailed(what: "the stream header")
        }
    }

    /// Opens the next sealed chunk into `output` (room for `sealed.count - chunkOverhead` bytes);
    /// returns the plaintext's length and whether this was the final chunk. Throws
    /// `.authenticationFailed` for an altered, reordered or foreign chunk, `.dataAfterFinalChunk`
    /// after the final one.
    public func open(_ sealed: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
                     into output: UnsafeMutableRawBufferPointer) throws(CryptoError) -> (count: Int, isFinal: Bool) {
        guard !isFinished else { throw .dataAfterFinalChunk }
        guard sealed.count >= SecretStream.chunkOverhead else {
            throw .authenticationFailed(what: "stream chunk \(chunksOpened + 1) (\(sealed.count) bytes, shorter than its MAC)")
        }
        precondition(output.count >= sealed.count - SecretStream.chunkOverhead, "the output buffer is too small")
        var written: UInt64 = 0
        var tag: UInt8 = 0
        let status = crypto_secretstream_xchacha20poly1305_pull(
            state.pointer, mutableBytes(output), &written, &tag, bytes(sealed), UInt64(sealed.count),
            bytes(associatedData), UInt64(associatedData.count))
        guard status == 0 else { throw .authenticationFailed(what: "stream chunk \(chunksOpened + 1)") }
        chunksOpened += 1
        switch tag {
        case SecretStream.messageTag: break
        case SecretStream.finalTag: isFinished = true
        default: throw .unexpectedStreamTag(tag)
        }
        return (Int(written), isFinished)
    }

    /// Opens the next sealed chunk and returns its plaintext and whether it was the final one.
    public func open(_ sealed: [UInt8], associatedData: [UInt8] = []) throws(CryptoError) -> (plaintext: [UInt8], isFinal: Bool) {
        var output = [UInt8](repeating: 0, count: max(sealed.count - SecretStream.chunkOverhead, 0))
        let result = output.withUnsafeMutableBytes { out in
            sealed.withUnsafeBytes { input in
                associatedData.withUnsafeBytes { ad in
                    Result { () throws(CryptoError) in try open(input, associatedData: ad, into: out) }
                }
            }
        }
        let opened = try result.get()
        return (Array(output[..<opened.count]), opened.isFinal)
    }

    /// Confirms the stream ended properly: `.truncatedStream` unless the final chunk was opened.
    public func finish() throws(CryptoError) {
        guard isFinished else { throw .truncatedStream(chunksRead: chunksOpened) }
    }
}
