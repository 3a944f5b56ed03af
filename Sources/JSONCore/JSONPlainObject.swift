/// Reads a JSON object written the plainest way, member by member straight from its bytes:
/// no white space, keys of printable ASCII, strings without an escape or a control
/// character, integers of at most 15 digits (exact as doubles) — what a compact writer
/// produces for small messages. For a hot path that hands anything else to the full
/// parser: every method returns nil where the bytes are not in that form, and then the
/// caller gives up, whether the bytes are JSON in another form or no JSON at all (the full
/// parser, run on the same bytes, tells which). Nothing is copied or allocated.
///
/// The bytes must stay valid while the reader and what it returned are used.
///
/// The readers of values are inlined into their caller: called across modules, each call
/// passed the reader through memory and back, and the optimizer did not inline them by
/// itself (measured on `Decide`'s parameters).
public struct JSONPlainObject {
    @usableFromInline let bytes: UnsafeRawBufferPointer
    /// The next byte to read; the object's closing `}` is the last byte, at `bytes.count - 1`.
    @usableFromInline var index = 1

    /// A reader of `bytes`, which must be one object from its `{` to its `}`, nothing around it.
    public init?(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "{"), bytes[bytes.count - 1] == UInt8(ascii: "}") else {
            return nil
        }
        self.bytes = bytes
    }

    /// Whether a member is still to be read: false once the last one has been, when the object
    /// is read whole (the members end exactly at its closing `}`).
    @inlinable
    public var hasMember: Bool { index < bytes.count - 1 }

    /// The next member's key, its bytes between the quotes (printable ASCII), with the `,`
    /// before it and the `:` after it consumed.
    public mutating func key() -> UnsafeRawBufferPointer? {
        if index > 1 {
            guard bytes[index] == UInt8(ascii: ",") else { return nil }
            index += 1
        }
        guard let key = asciiString(), index < bytes.count - 1, bytes[index] == UInt8(ascii: ":") else {
            return nil
        }
        index += 1
        return key
    }

    /// Whether the next member's key is `name` (printable ASCII, no `"` or `\`): then it is
    /// consumed as `key()` consumes it, with the `,` before it and the `:` after it; if not,
    /// nothing is. The key is compared where it lies, not scanned for its end first: a reader
    /// that knows its few members tries each name in turn (a key that is none of them is
    /// refused by `key()` as by this).
    ///
    /// Inlined so that where `name` is a literal the comparison is of constants: a few words
    /// compared, not a byte at a time (each with its own bounds and overflow checks).
    @inlinable @inline(__always)
    public mutating func key(_ name: StaticString) -> Bool {
        var at = index
        if at > 1 {
            guard at < bytes.count - 1, bytes[at] == UInt8(ascii: ",") else { return false }
            at &+= 1
        }
        let count = name.utf8CodeUnitCount
        // `"`, the name, `"` and `:`, all before the object's closing `}`; in range from here on.
        guard bytes.count - 1 - at >= count + 3, let start = bytes.baseAddress, bytes[at] == UInt8(ascii: "\""),
              Self.sameBytes(start + (at &+ 1), name.utf8Start, count: count),
              start.loadUnaligned(fromByteOffset: at &+ 1 &+ count, as: UInt16.self) == UInt16(littleEndian: 0x3A22)
        else { return false }
        index = at &+ count &+ 3
        return true
    }

    /// The next byte, not consumed: a reader that knows what may come tells the candidates
    /// apart by it before comparing one whole (`literal(_:)`). Nil at the object's closing `}`.
    @inlinable
    public var nextByte: UInt8? {
        @inline(__always) get { index < bytes.count &- 1 ? bytes[index] : nil }
    }

    /// Whether the bytes that come next are `text` (printable ASCII): then they are consumed;
    /// if not, nothing is. For a reader that expects one exact form (a writer's fixed key order
    /// and spacing) and compares the stretches that never change as a few words, not byte by
    /// byte. `text` must not end inside a value the reader reads afterwards: the bytes are
    /// compared, not read as JSON.
    @inlinable @inline(__always)
    public mutating func literal(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        // All before the object's closing `}`.
        guard bytes.count &- 1 &- index >= count, let start = bytes.baseAddress,
              Self.sameBytes(start + index, text.utf8Start, count: count) else { return false }
        index &+= count
        return true
    }

    /// The string value that must come next if it is exactly `count` bytes (at least 8) of
    /// printable ASCII, as `asciiString()` reads it; nil otherwise, when nothing is consumed.
    /// For a value whose length the reader knows (an id it made): checked a word at a time with
    /// no search for its end.
    @inlinable @inline(__always)
    public mutating func asciiString(count: Int) -> UnsafeRawBufferPointer? {
        precondition(count >= 8)
        // The quotes and the bytes between them, all before the object's closing `}`.
        guard bytes.count &- 1 &- index >= count &+ 2, let base = bytes.baseAddress, bytes[index] == UInt8(ascii: "\""),
              bytes[index &+ 1 &+ count] == UInt8(ascii: "\"") else { return nil }
        let start = index &+ 1
        func flags(_ offset: Int) -> UInt64 {
            Self.unplainBytes(UInt64(littleEndian: base.loadUnaligned(fromByteOffset: start &+ offset, as: UInt64.self)))
        }
        // Every word of the string, the last one overlapping the one before where `count` is not
        // a multiple of 8: a byte that is not plain in any of them refuses the string.
        var unplain = flags(count &- 8)
        var offset = 0
        while offset < count &- 8 {
            unplain |= flags(offset)
            offset &+= 8
        }
        guard unplain == 0 else { return nil }
        index = start &+ count &+ 1
        return UnsafeRawBufferPointer(start: base + start, count: count)
    }

    /// The string value that must come next if its bytes are exactly `expected` (at least 8
    /// bytes), compared where they lie; nil otherwise, when nothing is consumed. `expected` must
    /// be a string `asciiString()` takes (printable ASCII, no `"` or `\`): the bytes, the same,
    /// then need no check of their own. For a value the reader expects (the id it was given
    /// last time), cheaper than reading it.
    @inlinable @inline(__always)
    public mutating func string(sameAs expected: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        let count = expected.count
        precondition(count >= 8)
        guard bytes.count &- 1 &- index >= count &+ 2, let base = bytes.baseAddress, let other = expected.baseAddress,
              bytes[index] == UInt8(ascii: "\""), bytes[index &+ 1 &+ count] == UInt8(ascii: "\""),
              Self.sameBytes(base + (index &+ 1), other.assumingMemoryBound(to: UInt8.self), count: count)
        else { return nil }
        let start = index &+ 1
        index = start &+ count &+ 1
        return UnsafeRawBufferPointer(start: base + start, count: count)
    }

    /// Whether the `count` bytes at `a` and `b` are the same, compared as a few (overlapping)
    /// words: inlined where `count` is a constant, the words of a literal `b` are constants.
    @inlinable @inline(__always)
    public static func sameBytes(_ a: UnsafeRawPointer, _ b: UnsafePointer<UInt8>, count: Int) -> Bool {
        func same<Word: FixedWidthInteger>(_ offset: Int, _: Word.Type) -> Bool {
            a.loadUnaligned(fromByteOffset: offset, as: Word.self) == UnsafeRawPointer(b).loadUnaligned(fromByteOffset: offset, as: Word.self)
        }
        switch count {
        case 0: return true
        case 1: return same(0, UInt8.self)
        case 2...3: return same(0, UInt16.self) && same(count &- 2, UInt16.self)
        case 4...7: return same(0, UInt32.self) && same(count &- 4, UInt32.self)
        default:
            var offset = 0
            while count &- offset > 8 {
                guard same(offset, UInt64.self) else { return false }
                offset &+= 8
            }
            return same(count &- 8, UInt64.self)
        }
    }

    /// The string value that must come next, of printable ASCII only.
    @inlinable @inline(__always)
    public mutating func asciiString() -> UnsafeRawBufferPointer? {
        guard let string = quoted(), string.isPrintableASCII else { return nil }
        return string.bytes
    }

    /// The string value that must come next, its UTF-8 bytes as they lie in the object; nil
    /// also for invalid UTF-8. No `String` is made (none is allocated for a long one).
    @inlinable @inline(__always)
    public mutating func utf8String() -> UnsafeRawBufferPointer? {
        guard let string = quoted() else { return nil }
        // ASCII needs no validation (the parser's `parseString` does the same).
        return string.isPrintableASCII || Self.isValidUTF8(string.bytes) ? string.bytes : nil
    }

    /// The string value that must come next as a `String`; nil also for invalid UTF-8.
    public mutating func text() -> String? {
        utf8String().map { String(decoding: $0, as: UTF8.self) }
    }

    /// Whether `bytes` are valid UTF-8 (what `String(validating:as:)` accepts), without
    /// making a `String` of them.
    @usableFromInline
    static func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    /// The integer that must come next: `-?(0|[1-9][0-9]*)` of at most 15 digits, no
    /// fraction or exponent (a `.` or an `e` after the digits is left unread, and the next
    /// `key()` refuses it).
    @inlinable @inline(__always)
    public mutating func integer() -> Int? {
        let end = bytes.count - 1
        var at = index
        let negative = at < end && bytes[at] == UInt8(ascii: "-")
        if negative { at &+= 1 }
        let digitsStart = at
        var value = 0
        while at < end, at &- digitsStart < 16, case let digit = bytes[at] &- UInt8(ascii: "0"), digit < 10 {
            value = value &* 10 &+ Int(digit)
            at &+= 1
        }
        let digits = at &- digitsStart
        guard digits > 0, digits <= 15, digits == 1 || bytes[digitsStart] != UInt8(ascii: "0") else { return nil }
        index = at
        return negative ? -value : value
    }

    /// The quoted string at `index`, its bytes between the quotes, and whether they are all
    /// printable ASCII (none from 0x7F up); `index` then follows its closing quote.
    @inlinable @inline(__always)
    mutating func quoted() -> (bytes: UnsafeRawBufferPointer, isPrintableASCII: Bool)? {
        let end = bytes.count - 1
        guard index < end, bytes[index] == UInt8(ascii: "\"") else { return nil }
        let start = index &+ 1
        var at = start
        // Eight bytes at a time up to the first byte that is not plain, found by its flag;
        // from there (the closing quote, most often) byte by byte. Offsets stay within the
        // object, so their arithmetic cannot overflow.
        if let base = bytes.baseAddress {
            while end &- at >= 8 {
                let flags = Self.unplainBytes(UInt64(littleEndian: base.loadUnaligned(fromByteOffset: at, as: UInt64.self)))
                guard flags == 0 else {
                    at &+= flags.trailingZeroBitCount / 8
                    break
                }
                at &+= 8
            }
        }
        var isPrintableASCII = true
        while at < end {
            let byte = bytes[at]
            if byte == UInt8(ascii: "\"") {
                index = at &+ 1
                return (UnsafeRawBufferPointer(rebasing: bytes[start..<at]), isPrintableASCII)
            }
            guard byte >= 0x20, byte != UInt8(ascii: "\\") else { return nil }
            if byte >= 0x7F { isPrintableASCII = false }
            at &+= 1
        }
        return nil
    }

    /// The high bit of each byte of `word` (in memory order, the lowest byte first) that is
    /// not plain in a string — a `"`, a `\`, a control character, or from 0x7F up — set; exact
    /// for the lowest such byte: a borrow or a carry into a higher byte starts only at a
    /// flagged byte, so only flags above the lowest may be spurious.
    @inlinable @inline(__always)
    static func unplainBytes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        func zeroBytes(_ w: UInt64) -> UInt64 { (w &- ones) & ~w & highs }
        let controls = (word &- ones &* 0x20) & ~word & highs
        let fromDelete = (word | (word &+ ones)) & highs
        return controls | fromDelete | zeroBytes(word ^ (ones &* 0x22)) | zeroBytes(word ^ (ones &* 0x5C))
    }

    /// Whether `bytes` are `name`'s UTF-8 bytes (inlinable: compared where the name is known).
    @inlinable
    public static func equal(_ bytes: UnsafeRawBufferPointer, _ name: StaticString) -> Bool {
        guard bytes.count == name.utf8CodeUnitCount else { return false }
        for offset in 0..<bytes.count where bytes[offset] != name.utf8Start[offset] { return false }
        return true
    }
}
