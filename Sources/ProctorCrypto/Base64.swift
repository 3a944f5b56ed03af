import CSodium

/// Standard Base64 (RFC 4648 §4, with padding) for data that is not secret: signatures, signed
/// payloads. libsodium's codec, constant time like the key codecs beside it.
public enum Base64 {
    /// The Base64 text of `data`.
    public static func encode(_ data: [UInt8]) -> String {
        data.withUnsafeBytes { base64($0) }
    }

    /// The bytes `text` encodes, or nil when it is not Base64 (white space, bad padding, other
    /// characters). `maximumCount` bounds the result; longer text is refused before decoding.
    public static func decode(_ text: String, maximumCount: Int = Int.max) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count / 4 * 3 <= maximumCount else { return nil }
        var output = [UInt8](repeating: 0, count: characters.count / 4 * 3 + 3)
        var written = 0
        let status = characters.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { out in
                input.withMemoryRebound(to: CChar.self) { chars -> Int32 in
                    guard let start = chars.baseAddress else { return 0 }
                    var end: UnsafePointer<CChar>? = nil
                    let status = sodium_base642bin(mutableBytes(out), out.count, start, chars.count, nil, &written, &end,
                                                   sodium_base64_VARIANT_ORIGINAL)
                    return status == 0 && end == UnsafePointer(start + chars.count) ? 0 : -1
                }
            }
        }
        guard status == 0 else { return nil }
        return Array(output[..<written])
    }
}
