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
        let digits = Array(text.utf8)
        guard digits.count == 32 else { throw .wrongLength(digits.count) }
        var halves: [UInt64] = [0, 0]
        for (position, digit) in digits.enumerated() {
            guard let value = Self.hexValue(digit) else { throw .notHexadecimal(position: position) }
            halves[position / 16] = halves[position / 16] << 4 | UInt64(value)
        }
        high = halves[0]
        low = halves[1]
    }

    /// An identifier written in the source; a malformed literal is a programmer error.
    public init(_ literal: StaticString) {
        do {
            try self.init(parsing: literal.description)
        } catch {
            preconditionFailure("invalid MESSAGE_ID literal \(literal): \(error)")
        }
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
