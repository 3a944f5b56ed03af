/// A journal `MESSAGE_ID`: a 128-bit identifier naming one kind of event, written as 32
/// lowercase hex digits (the form `systemd-id128 new` prints and the catalog uses).
public struct MessageID: Hashable, Sendable, CustomStringConvertible {
    /// The identifier's 128 bits, most significant half first.
    public let high: UInt64
    public let low: UInt64

    /// Why a text is not a message id.
    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case wrongLength(Int)
        case notHexadecimal(position: Int)

        public var description: String {
            switch self {
            case .wrongLength(let length):
                "a MESSAGE_ID has 32 hex digits, found \(length) characters"
            case .notHexadecimal(let position):
                "a MESSAGE_ID has only hex digits, found another character at position \(position)"
            }
        }
    }

    /// Parses 32 hex digits (either case, no dashes).
    public init(parsing text: String) throws(ParseError) {
        var text = text
        self = try text.withUTF8 { digits in Result { () throws(ParseError) in try Self(digits: digits) } }.get()
    }

    /// An identifier written in the source; a malformed literal is a programmer error.
    /// Read from the literal's bytes in place: an event's id is made each time it is logged
    /// (a denial's with every denied `Decide`), so no `String` or array is made for it.
    public init(_ literal: StaticString) {
        precondition(literal.hasPointerRepresentation, "a MESSAGE_ID literal is text")
        do {
            try self.init(digits: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
        } catch {
            preconditionFailure("invalid MESSAGE_ID literal \(literal): \(error)")
        }
    }

    private init(digits: UnsafeBufferPointer<UInt8>) throws(ParseError) {
        guard digits.count == 32 else { throw .wrongLength(digits.count) }
        var high: UInt64 = 0, low: UInt64 = 0
        for position in 0..<32 {
            guard let value = Self.hexValue(digits[position]) else { throw .notHexadecimal(position: position) }
            if position < 16 { high = high << 4 | UInt64(value) } else { low = low << 4 | UInt64(value) }
        }
        self.high = high
        self.low = low
    }

    /// 32 lowercase hex digits.
    public var description: String { Self.hex(high) + Self.hex(low) }

    private static func hex(_ half: UInt64) -> String {
        let digits = String(half, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
