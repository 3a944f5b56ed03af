/// Reads a document value by value, for a reader that builds its own model straight from
/// the bytes instead of from a `JSONValue` tree (whose dictionaries and reference counts
/// cost more than the model itself). The same strict rules as `JSONParser`, with which it
/// shares its scanner; duplicate keys are the caller's to detect, since only it knows which
/// keys it has seen (`value()` checks them inside the subtrees it returns).
///
/// Errors carry the offset only: a caller that needs a located message parses again with
/// `JSONParser.parseDocument`.
public struct JSONPullReader {
    /// What the next value is, by its first byte.
    public enum Kind: Sendable {
        case object, array, string, number, bool, null
    }

    private var reader: JSONParser.Reader
    /// Per open container, innermost last: whether it has yielded a member yet.
    private var started: [Bool] = []

    public init(_ bytes: [UInt8], maxDepth: Int = JSONParser.defaultMaxDepth) {
        reader = JSONParser.Reader(bytes: bytes, maxDepth: maxDepth, tracksPath: false, recordOffsets: false)
    }

    /// A reader that continues `bytes` at `offset` as the reader that got there would: inside
    /// `openObjects` nested objects, each of which has yielded a member already (so a `,` or
    /// the `}` comes next). It reads on exactly as that reader would only when that reader's
    /// state is this one: a caller that guesses `offset` must check that the guess was right
    /// (`offset` of the reader that read up to it).
    public init(_ bytes: [UInt8], maxDepth: Int = JSONParser.defaultMaxDepth, resumingAt offset: Int, openObjects: Int) {
        precondition(offset > 0 && offset <= bytes.count && openObjects > 0, "not inside a document")
        self.init(bytes, maxDepth: maxDepth)
        reader.index = offset
        reader.depth = openObjects
        started = Array(repeating: true, count: openObjects)
    }

    /// How many bytes of the document have been consumed.
    public var offset: Int { reader.index }

    /// The kind of the next value, which is not consumed.
    public mutating func peek() throws(JSONParseError) -> Kind {
        if reader.index == 0, reader.bytes.starts(with: [0xEF, 0xBB, 0xBF]) { throw reader.error("byte-order mark") }
        reader.skipWhitespace()
        guard reader.index < reader.bytes.count else { throw reader.error("unexpected end of input: expected a value") }
        switch reader.bytes[reader.index] {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool
        case UInt8(ascii: "n"): return .null
        default: return .number
        }
    }

    /// Consumes the `{` of the object that must come next.
    public mutating func beginObject() throws(JSONParseError) {
        try expect(.object)
        try reader.enter()
        reader.index += 1
        started.append(false)
    }

    /// The next key of the innermost object, its `:` consumed; nil at its end (consumed).
    public mutating func nextKey() throws(JSONParseError) -> String? {
        guard try nextMember(closing: UInt8(ascii: "}")) else { return nil }
        guard reader.index < reader.bytes.count, reader.bytes[reader.index] == UInt8(ascii: "\"") else {
            throw reader.error("expected a key in double quotes")
        }
        let key = try reader.parseString()
        reader.skipWhitespace()
        guard reader.index < reader.bytes.count, reader.bytes[reader.index] == UInt8(ascii: ":") else {
            throw reader.error("expected ':' after the key \"\(key)\"")
        }
        reader.index += 1
        return key
    }

    /// Consumes the `[` of the array that must come next.
    public mutating func beginArray() throws(JSONParseError) {
        try expect(.array)
        try reader.enter()
        reader.index += 1
        started.append(false)
    }

    /// Whether the innermost array has another element; its end is consumed when not.
    public mutating func nextElement() throws(JSONParseError) -> Bool {
        try nextMember(closing: UInt8(ascii: "]"))
    }

    /// The string that must come next.
    public mutating func string() throws(JSONParseError) -> String {
        try expect(.string)
        return try reader.parseString()
    }

    /// The number that must come next.
    public mutating func number() throws(JSONParseError) -> Double {
        try expect(.number)
        return try reader.parseNumber()
    }

    /// The next value whole, whatever it is (duplicate keys inside it are errors).
    public mutating func value() throws(JSONParseError) -> JSONValue {
        reader.skipWhitespace()
        return try reader.parseValue()
    }

    /// Checks that nothing but white space follows the document.
    public mutating func end() throws(JSONParseError) {
        reader.skipWhitespace()
        guard started.isEmpty, reader.index == reader.bytes.count else { throw reader.error("unexpected data after the document") }
    }

    /// An error for a value the caller does not accept here, though it is JSON.
    public func unexpected() -> JSONParseError { reader.error("unexpected value") }

    private mutating func expect(_ kind: Kind) throws(JSONParseError) {
        guard try peek() == kind else { throw reader.error("unexpected value") }
    }

    /// Steps over the `,` between members, or consumes `closing` and closes the container.
    private mutating func nextMember(closing: UInt8) throws(JSONParseError) -> Bool {
        reader.skipWhitespace()
        guard reader.index < reader.bytes.count, let wasStarted = started.last else { throw reader.error("unexpected end of input") }
        let byte = reader.bytes[reader.index]
        if byte == closing {
            reader.index += 1
            reader.depth -= 1
            started.removeLast()
            return false
        }
        if wasStarted {
            guard byte == UInt8(ascii: ",") else { throw reader.error("expected ','") }
            reader.index += 1
            reader.skipWhitespace()
        }
        started[started.count - 1] = true
        return true
    }
}
