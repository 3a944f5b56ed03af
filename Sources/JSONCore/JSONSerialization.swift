extension JSONValue {
    /// UTF-8 JSON with object keys sorted by their UTF-8 bytes and no insignificant
    /// white space: the same value always gives the same bytes.
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        write(to: &out)
        return out
    }

    public func serializedString() -> String { String(decoding: serialized(), as: UTF8.self) }

    /// Appends the canonical serialisation to `out`.
    public func write(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let n): Self.writeNumber(n, to: &out)
        case .string(let s): Self.writeString(s, to: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                element.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            var first = true
            for (key, value) in members.sorted(by: { Self.utf8Less($0.key, $1.key) }) {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                Self.writeString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// The order of object keys in the canonical form: by UTF-8 bytes. Swift's `String <`
    /// compares by Unicode canonical ordering; canonical JSON wants a plain, locale- and
    /// normalisation-free byte order.
    public static func utf8Less(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { a in
            b.withUTF8 { b in
                for i in 0..<min(a.count, b.count) where a[i] != b[i] { return a[i] < b[i] }
                return a.count < b.count
            }
        }
    }

    /// Appends `n` as `write(to:)` writes `.number(n)`, for writers that serialise their
    /// own types in the canonical form without building a `JSONValue` first.
    public static func writeNumber(_ n: Int, to out: inout [UInt8]) { writeNumber(Double(n), to: &out) }

    /// Appends `n` as `write(to:)` writes `.number(n)`.
    public static func writeNumber(_ n: Double, to out: inout [UInt8]) {
        if n.rounded(.towardZero) == n, abs(n) < 1e15 {
            out.append(contentsOf: String(Int64(n)).utf8)
        } else if n.isFinite {
            out.append(contentsOf: n.description.utf8)
        } else {
            out.append(contentsOf: "null".utf8)  // JSON has no infinities; the parser never makes one
        }
    }

    /// Appends `s` as `write(to:)` writes `.string(s)`: quoted, with `"`, `\\` and control
    /// characters escaped.
    public static func writeString(_ s: String, to out: inout [UInt8]) {
        var s = s
        s.withUTF8 { writeString(utf8: $0, to: &out) }
    }

    /// Copies the runs that need no escape whole: most strings are one such run. The scan
    /// tests eight bytes at a time and looks at single bytes only in a word that has one
    /// to escape: proctord writes a reason and a rule into every `Decide` reply.
    private static func writeString(utf8: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var unwritten = 0
        var i = 0
        while i < utf8.count {
            if utf8.count &- i >= 8,
               !wordNeedsEscape(UnsafeRawPointer(utf8.baseAddress!).loadUnaligned(fromByteOffset: i, as: UInt64.self)) {
                i &+= 8
                continue
            }
            let at = i, byte = utf8[at]
            i &+= 1
            guard byteNeedsEscape(byte) else { continue }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[unwritten..<at]))
            unwritten = at + 1
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            default:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), 0x30, 0x30,
                                        hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            }
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[unwritten...]))
        out.append(UInt8(ascii: "\""))
    }

    /// Whether `writeString` writes `utf8` as it is between its quotes: it holds no control
    /// character, quote or backslash. For writers that copy such text into a buffer sized
    /// beforehand (a `Decide` reply's rule).
    public static func writesVerbatim(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        while utf8.count &- i >= 8 {
            if wordNeedsEscape(UnsafeRawPointer(utf8.baseAddress!).loadUnaligned(fromByteOffset: i, as: UInt64.self)) {
                return false
            }
            i &+= 8
        }
        while i < utf8.count {
            if byteNeedsEscape(utf8[i]) { return false }
            i &+= 1
        }
        return true
    }

    @inline(__always)
    private static func byteNeedsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// Whether one of the eight bytes of `word` is a control character, `"` or a backslash. Exact,
    /// in either byte order: a byte below 0x20, or one equal to the quote or backslash (zero
    /// after the XOR), sets its high bit in the test; a borrow that crosses into a higher byte
    /// starts only at such a byte.
    @inline(__always)
    private static func wordNeedsEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        func hasByteBelow(_ bound: UInt64, _ w: UInt64) -> Bool { (w &- ones &* bound) & ~w & highs != 0 }
        return hasByteBelow(0x20, word) || hasByteBelow(1, word ^ (ones &* 0x22)) || hasByteBelow(1, word ^ (ones &* 0x5C))
    }
}

extension [UInt8] {
    /// Appends the UTF-8 bytes of `text` in one copy, for the fixed parts of a message written
    /// on a hot path: a `String` literal's `utf8` view is appended through a generic loop.
    @inlinable
    public mutating func append(utf8 text: StaticString) {
        append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }
}
