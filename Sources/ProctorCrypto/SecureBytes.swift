import CSodium

/// Cryptographically secure random bytes (libsodium's `randombytes_buf`: `getrandom(2)`).
public enum SecureRandom {
    /// `count` random bytes.
    public static func bytes(count: Int) throws(CryptoError) -> [UInt8] {
        try Sodium.ready()
        var result = [UInt8](repeating: 0, count: count)
        result.withUnsafeMutableBytes { randombytes_buf(mutableBytes($0), $0.count) }
        return result
    }

    /// Fills `buffer` with random bytes.
    public static func fill(_ buffer: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        try Sodium.ready()
        randombytes_buf(mutableBytes(buffer), buffer.count)
    }
}

/// Comparisons whose duration does not depend on where two secrets differ.
public enum ConstantTime {
    /// Whether `a` and `b` hold the same bytes (`sodium_memcmp`). Lengths are not secret: different
    /// lengths compare unequal at once.
    public static func equals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in sodium_memcmp(bytes(x), bytes(y), x.count) == 0 } }
    }
}

/// Memory for key material: locked into RAM where the limit allows (`sodium_mlock`, so it is not
/// swapped out) and zeroed when released. Immutable once filled, hence shareable.
final class LockedBytes: @unchecked Sendable {
    let buffer: UnsafeMutableRawBufferPointer
    let count: Int
    private let isLocked: Bool

    /// `count` bytes written once by `fill`; if `fill` throws the memory is zeroed and released.
    init<E: Error>(count: Int, fill: (UnsafeMutableRawBufferPointer) throws(E) -> Void) throws(E) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        // mlock can fail under RLIMIT_MEMLOCK; the bytes are still zeroed on release.
        let isLocked = sodium_mlock(mutableBytes(buffer), buffer.count) == 0
        do { try fill(UnsafeMutableRawBufferPointer(rebasing: buffer[..<count])) } catch {
            Self.release(buffer, isLocked: isLocked)
            throw error
        }
        self.buffer = buffer
        self.count = count
        self.isLocked = isLocked
    }

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: buffer[..<count]) }

    private static func release(_ buffer: UnsafeMutableRawBufferPointer, isLocked: Bool) {
        if isLocked { sodium_munlock(mutableBytes(buffer), buffer.count) }  // zeroes, then unlocks
        else { sodium_memzero(mutableBytes(buffer), buffer.count) }
        buffer.deallocate()
    }

    deinit { Self.release(buffer, isLocked: isLocked) }
}

/// Zeroes `array`'s bytes (`sodium_memzero`, which the compiler cannot optimise away).
func wipe(_ array: inout [UInt8]) {
    array.withUnsafeMutableBytes { sodium_memzero(mutableBytes($0), $0.count) }
}

/// Lower-case hex of `bytes`.
func hex(_ bytes: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    for byte in bytes { text += [digits[Int(byte >> 4)], digits[Int(byte & 0xf)]] }
    return String(decoding: text, as: UTF8.self)
}

/// Standard Base64 (with padding) of `bytes`, via libsodium.
func base64(_ input: UnsafeRawBufferPointer) -> String {
    let variant = sodium_base64_VARIANT_ORIGINAL
    let length = sodium_base64_encoded_len(input.count, variant)
    var output = [CChar](repeating: 0, count: length)
    output.withUnsafeMutableBufferPointer { out in
        _ = sodium_bin2base64(out.baseAddress!, length, bytes(input), input.count, variant)
    }
    let text = output.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    wipeCharacters(&output)
    return text
}

/// Decodes standard Base64 into exactly `output.count` bytes; false when the text is not Base64
/// or decodes to another length. Constant time in the text's content (libsodium).
func decodeBase64(_ text: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Bool {
    text.withMemoryRebound(to: CChar.self) { chars in
        guard let start = chars.baseAddress else { return false }
        var written = 0
        var end: UnsafePointer<CChar>? = nil
        let status = sodium_base642bin(mutableBytes(output), output.count, start, chars.count, nil, &written, &end,
                                       sodium_base64_VARIANT_ORIGINAL)
        return status == 0 && written == output.count && end == UnsafePointer(start + chars.count)
    }
}

private func wipeCharacters(_ array: inout [CChar]) {
    array.withUnsafeMutableBytes { sodium_memzero(mutableBytes($0), $0.count) }
}
