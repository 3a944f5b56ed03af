/// A line and column in a document, both counted from 1; the column counts Unicode
/// scalars, as an editor shows them.
public struct SourceLocation: Hashable, Sendable, CustomStringConvertible {
    public var line: Int
    public var column: Int
    public init(line: Int, column: Int) { self.line = line; self.column = column }
    public var description: String { "line \(line), column \(column)" }
}

/// Why a document is not JSON, and where.
public struct JSONParseError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public var offset: Int
    public var location: SourceLocation
    /// The innermost value being read when the error was found, as far as the parser knew
    /// it (recorded by `parseDocument` and `syntaxError`; the root for `parse`).
    public var path: JSONPath = .root
    /// Whether the document is JSON but repeats a key of an object (its message says which,
    /// and whether in another Unicode form): a reader that answers per member can name it.
    public var isDuplicateKey = false
    public var description: String { "\(location): \(message)" }
}

/// A parsed document that remembers where each value started, for error messages that
/// point into the file an administrator wrote.
public struct JSONDocument: Sendable {
    public let value: JSONValue
    private let offsets: [JSONPath: Int]
    private let lineStarts: [Int]
    private let bytes: [UInt8]

    init(value: JSONValue, offsets: [JSONPath: Int], bytes: [UInt8]) {
        self.value = value
        self.offsets = offsets
        self.bytes = bytes
        self.lineStarts = JSONParser.lineStarts(of: bytes)
    }

    /// Where the value at `path` starts (for an object member: where its key starts),
    /// or the nearest enclosing value that the document has.
    public func location(of path: JSONPath) -> SourceLocation {
        var path = path
        while true {
            if let offset = offsets[path] { return JSONParser.location(of: offset, in: bytes, lineStarts: lineStarts) }
            guard let parent = path.parent else { return SourceLocation(line: 1, column: 1) }
            path = parent
        }
    }
}

/// A strict RFC 8259 parser: no comments, no trailing commas, valid UTF-8 only, no
/// duplicate object keys (a policy that says two things in one place is an error), and
/// bounded nesting so hostile input cannot exhaust the stack.
public enum JSONParser {
    public static let defaultMaxDepth = 128

    /// Parses a complete document. White space may surround it; nothing else may.
    public static func parse(_ bytes: some Collection<UInt8>, maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSONValue {
        let array = Array(bytes)
        var reader = Reader(bytes: array, maxDepth: maxDepth, tracksPath: false, recordOffsets: false)
        return try reader.parseDocument()
    }

    /// The error `parse` throws for `bytes`, with the path of the innermost value the parser
    /// had reached (as `parseDocument` reports it; `parse` does not track it), or nil when
    /// they parse. Cheaper than `parseDocument` for that: no offsets are recorded.
    public static func syntaxError(in bytes: [UInt8], maxDepth: Int = defaultMaxDepth) -> JSONParseError? {
        var reader = Reader(bytes: bytes, maxDepth: maxDepth, tracksPath: true, recordOffsets: false)
        do {
            _ = try reader.parseDocument()
            return nil
        } catch {
            return error
        }
    }

    public static func parse(_ text: String, maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8), maxDepth: maxDepth)
    }

    /// Parses and records where every value starts.
    public static func parseDocument(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSONDocument {
        var reader = Reader(bytes: bytes, maxDepth: maxDepth, tracksPath: true, recordOffsets: true)
        let value = try reader.parseDocument()
        return JSONDocument(value: value, offsets: reader.offsets, bytes: bytes)
    }

    static func lineStarts(of bytes: [UInt8]) -> [Int] {
        var starts = [0]
        for (i, b) in bytes.enumerated() where b == 0x0A { starts.append(i + 1) }
        return starts
    }

    static func location(of offset: Int, in bytes: [UInt8], lineStarts: [Int]) -> SourceLocation {
        var low = 0, high = lineStarts.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if lineStarts[mid] <= offset { low = mid } else { high = mid - 1 }
        }
        return SourceLocation(line: low + 1, column: column(of: offset, lineStart: lineStarts[low], in: bytes))
    }

    /// Where `offset` is, from the bytes before it alone: for a single lookup, such as an
    /// error's, cheaper than a table of every line's start (no allocation, no scan past it).
    static func location(of offset: Int, in bytes: [UInt8]) -> SourceLocation {
        var line = 1, lineStart = 0
        for i in 0..<min(offset, bytes.count) where bytes[i] == 0x0A {
            line += 1
            lineStart = i + 1
        }
        return SourceLocation(line: line, column: column(of: offset, lineStart: lineStart, in: bytes))
    }

    private static func column(of offset: Int, lineStart start: Int, in bytes: [UInt8]) -> Int {
        let end = min(offset, bytes.count)
        // Count scalars: every byte that is not a UTF-8 continuation byte starts one.
        return bytes[start..<max(start, end)].reduce(0) { $0 + (($1 & 0xC0) == 0x80 ? 0 : 1) } + 1
    }

    /// `text` with every scalar outside printable ASCII, `"` and `\\` written as a JSON escape
    /// (`\\u00e9`; a surrogate pair beyond U+FFFF): two spellings that look alike, told apart.
    static func escapingNonASCII(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x22, 0x5C: escaped += "\\" + String(scalar)
            case 0x20...0x7E: escaped.unicodeScalars.append(scalar)
            default: for unit in String(scalar).utf16 { escaped += "\\u" + hex4(unit) }
            }
        }
        return escaped
    }

    private static func hex4(_ unit: UInt16) -> String {
        let digits = String(unit, radix: 16)
        return String(repeating: "0", count: 4 - digits.count) + digits
    }

    struct Reader {
        let bytes: [UInt8]
        let maxDepth: Int
        /// Whether `path` follows the value being read (for errors), and whether `offsets`
        /// records where each value starts (which needs `path`).
        let tracksPath: Bool
        let recordOffsets: Bool
        var index = 0
        var depth = 0
        var path: [JSONPath.Component] = []
        var offsets: [JSONPath: Int] = [:]
        /// The members of the objects being read, innermost last: an object's members are
        /// collected here and become a dictionary of exactly their count at its end,
        /// rather than growing (and rehashing) one member at a time.
        var pendingKeys: [String] = []
        var pendingValues: [JSONValue] = []

        init(bytes: [UInt8], maxDepth: Int, tracksPath: Bool, recordOffsets: Bool) {
            self.bytes = bytes
            self.maxDepth = maxDepth
            self.tracksPath = tracksPath || recordOffsets
            self.recordOffsets = recordOffsets
        }

        func error(_ message: String, at offset: Int? = nil) -> JSONParseError {
            let offset = offset ?? index
            return JSONParseError(message: message, offset: offset,
                                  location: JSONParser.location(of: offset, in: bytes),
                                  path: JSONPath(path))
        }

        mutating func parseDocument() throws(JSONParseError) -> JSONValue {
            // Some editors start UTF-8 files with a byte-order mark; name it rather than
            // report a baffling "unexpected byte 0xEF".
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
                throw error("the document starts with a UTF-8 byte-order mark (EF BB BF), which JSON does not allow: save it without one")
            }
            skipWhitespace()
            if recordOffsets { offsets[JSONPath.root] = index }
            let value = try parseValue()
            skipWhitespace()
            if index < bytes.count { throw error("unexpected \(describe(bytes[index])) after the end of the document") }
            return value
        }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x0A, 0x0D, 0x09: index += 1
                default: return
                }
            }
        }

        func describe(_ byte: UInt8) -> String {
            if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
            return "byte 0x" + String(byte, radix: 16, uppercase: true)
        }

        mutating func parseValue() throws(JSONParseError) -> JSONValue {
            guard index < bytes.count else { throw error("unexpected end of input: expected a value") }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try parseObject()
            case UInt8(ascii: "["): return try parseArray()
            case UInt8(ascii: "\""): return .string(try parseString())
            case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
            case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
            case UInt8(ascii: "n"): try expectLiteral("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
            case let byte: throw error("unexpected \(describe(byte)): expected a value")
            }
        }

        mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
            let start = index
            let count = literal.utf8CodeUnitCount
            let matches = literal.withUTF8Buffer { expected in
                index + count <= bytes.count && (0..<count).allSatisfy { bytes[index + $0] == expected[$0] }
            }
            guard matches else { throw error("invalid literal: expected '\(literal)'", at: start) }
            index += count
        }

        mutating func enter() throws(JSONParseError) {
            depth += 1
            if depth > maxDepth { throw error("nesting deeper than \(maxDepth) levels") }
        }

        /// Objects up to this many members look for a duplicate key by comparing with each
        /// earlier key, which is cheaper than hashing; larger ones keep a set of their keys.
        static let linearDuplicateSearchLimit = 8

        mutating func parseObject() throws(JSONParseError) -> JSONValue {
            try enter()
            defer { depth -= 1 }
            index += 1
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object([:]) }
            let firstMember = pendingKeys.count
            defer {
                pendingKeys.removeSubrange(firstMember...)
                pendingValues.removeSubrange(firstMember...)
            }
            var keySet: Set<String>?
            while true {
                skipWhitespace()
                guard index < bytes.count else { throw error("unexpected end of input: expected a key or '}'") }
                guard bytes[index] == UInt8(ascii: "\"") else {
                    throw error("unexpected \(describe(bytes[index])): expected a key in double quotes")
                }
                let keyStart = index
                let key = try parseString()
                if isDuplicate(key, membersFrom: firstMember, keySet: &keySet) {
                    throw duplicateKeyError(key, at: keyStart, membersFrom: firstMember)
                }
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                    throw error("expected ':' after the key \"\(key)\"")
                }
                index += 1
                skipWhitespace()
                if tracksPath {
                    path.append(.key(key))
                    if recordOffsets { offsets[JSONPath(path)] = keyStart }
                }
                let value = try parseValue()
                pendingKeys.append(key)
                pendingValues.append(value)
                if tracksPath { path.removeLast() }
                skipWhitespace()
                guard index < bytes.count else { throw error("unexpected end of input: expected ',' or '}'") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    return .object(Dictionary(uniqueKeysWithValues: zip(pendingKeys[firstMember...], pendingValues[firstMember...])))
                }
                throw error("unexpected \(describe(bytes[index])): expected ',' or '}'")
            }
        }

        /// Whether the object whose members start at `firstMember` already has `key`.
        private func isDuplicate(_ key: String, membersFrom firstMember: Int, keySet: inout Set<String>?) -> Bool {
            let count = pendingKeys.count - firstMember
            if count < Self.linearDuplicateSearchLimit {
                return pendingKeys[firstMember...].contains(key)
            }
            if keySet == nil { keySet = Set(pendingKeys[firstMember...]) }
            return !keySet!.insert(key).inserted
        }

        /// The error for `key`, which the object whose members start at `firstMember` already
        /// has. `String`'s `==` and hashing are canonical equivalence, so the earlier key may be
        /// the same text in another Unicode form ("é" as U+00E9, or as "e" and U+0301), which a
        /// dictionary cannot hold both of: say so, spelling both keys out, as they look alike.
        private func duplicateKeyError(_ key: String, at keyStart: Int, membersFrom firstMember: Int) -> JSONParseError {
            let earlier = pendingKeys[firstMember...].first { $0 == key } ?? key
            var duplicate = error(earlier.hasSameBytes(as: key)
                ? "duplicate key \"\(key)\": an object may say each key once"
                : "duplicate key \"\(JSONParser.escapingNonASCII(key))\": the earlier key "
                    + "\"\(JSONParser.escapingNonASCII(earlier))\" in another Unicode form; an object may say each key once",
                at: keyStart)
            duplicate.path = JSONPath(path + [.key(key)])
            duplicate.isDuplicateKey = true
            return duplicate
        }

        mutating func parseArray() throws(JSONParseError) -> JSONValue {
            try enter()
            defer { depth -= 1 }
            index += 1
            var elements: [JSONValue] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
            while true {
                skipWhitespace()
                if tracksPath {
                    path.append(.index(elements.count))
                    if recordOffsets { offsets[JSONPath(path)] = index }
                }
                elements.append(try parseValue())
                if tracksPath { path.removeLast() }
                skipWhitespace()
                guard index < bytes.count else { throw error("unexpected end of input: expected ',' or ']'") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
                throw error("unexpected \(describe(bytes[index])): expected ',' or ']'")
            }
        }

        mutating func parseString() throws(JSONParseError) -> String {
            let start = index
            index += 1
            // Fast path: no escapes.
            var scan = index
            var allBytesOred: UInt8 = 0
            while scan < bytes.count {
                let b = bytes[scan]
                if b == UInt8(ascii: "\"") {
                    let contents = index..<scan
                    // ASCII is valid UTF-8: `decoding` then only copies, where `validating`
                    // would check every byte again.
                    let s: String? = bytes.withUnsafeBufferPointer { buffer in
                        let utf8 = UnsafeBufferPointer(rebasing: buffer[contents])
                        return allBytesOred < 0x80 ? String(decoding: utf8, as: UTF8.self) : String(validating: utf8, as: UTF8.self)
                    }
                    guard let s else { throw error("invalid UTF-8 in a string", at: start) }
                    index = scan + 1
                    return s
                }
                allBytesOred |= b
                if b == UInt8(ascii: "\\") { break }
                if b < 0x20 { throw error("control character (byte 0x\(String(b, radix: 16))) in a string: escape it", at: scan) }
                scan += 1
            }
            var utf8: [UInt8] = Array(bytes[index..<scan])
            index = scan
            while true {
                guard index < bytes.count else { throw error("unterminated string", at: start) }
                let b = bytes[index]
                switch b {
                case UInt8(ascii: "\""):
                    index += 1
                    guard let s = String(validating: utf8, as: UTF8.self) else {
                        throw error("invalid UTF-8 in a string", at: start)
                    }
                    return s
                case UInt8(ascii: "\\"):
                    index += 1
                    guard index < bytes.count else { throw error("unterminated string", at: start) }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""): utf8.append(0x22)
                    case UInt8(ascii: "\\"): utf8.append(0x5C)
                    case UInt8(ascii: "/"): utf8.append(0x2F)
                    case UInt8(ascii: "b"): utf8.append(0x08)
                    case UInt8(ascii: "f"): utf8.append(0x0C)
                    case UInt8(ascii: "n"): utf8.append(0x0A)
                    case UInt8(ascii: "r"): utf8.append(0x0D)
                    case UInt8(ascii: "t"): utf8.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try parseHex4()
                        if (0xD800..<0xDC00).contains(scalar) {
                            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                                throw error("unpaired surrogate \\u\(String(scalar, radix: 16)) in a string")
                            }
                            index += 2
                            let low = try parseHex4()
                            guard (0xDC00..<0xE000).contains(low) else { throw error("invalid low surrogate in a string") }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else if (0xDC00..<0xE000).contains(scalar) {
                            throw error("unpaired surrogate \\u\(String(scalar, radix: 16)) in a string")
                        }
                        utf8.append(contentsOf: String(Character(Unicode.Scalar(scalar)!)).utf8)
                    default:
                        throw error("invalid escape '\\\(Character(Unicode.Scalar(escape)))' in a string", at: index - 2)
                    }
                default:
                    if b < 0x20 { throw error("control character (byte 0x\(String(b, radix: 16))) in a string: escape it") }
                    utf8.append(b)
                    index += 1
                }
            }
        }

        mutating func parseHex4() throws(JSONParseError) -> UInt32 {
            guard index + 4 <= bytes.count else { throw error("unterminated \\u escape") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let b = bytes[index]
                let digit: UInt32
                switch b {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(b - 0x30)
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(b - 0x61 + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(b - 0x41 + 10)
                default: throw error("invalid hex digit in a \\u escape")
                }
                value = value << 4 | digit
                index += 1
            }
            return value
        }

        mutating func parseNumber() throws(JSONParseError) -> Double {
            let start = index
            var integral = true
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            func isDigit(_ i: Int) -> Bool { i < bytes.count && bytes[i] >= 0x30 && bytes[i] <= 0x39 }
            guard isDigit(index) else { throw error("invalid number: expected a digit", at: index) }
            if bytes[index] == UInt8(ascii: "0") {
                index += 1
                if isDigit(index) { throw error("invalid number: leading zero", at: start) }
            } else {
                while isDigit(index) { index += 1 }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                integral = false
                index += 1
                guard isDigit(index) else { throw error("invalid number: expected a digit after '.'") }
                while isDigit(index) { index += 1 }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                integral = false
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard isDigit(index) else { throw error("invalid number: expected a digit in the exponent") }
                while isDigit(index) { index += 1 }
            }
            let text = bytes[start..<index]
            if integral, text.count <= 16 {
                var value: Int64 = 0
                for b in text where b != UInt8(ascii: "-") { value = value * 10 + Int64(b - 0x30) }
                return Double(text.first == UInt8(ascii: "-") ? -value : value)
            }
            guard let value = Double(String(decoding: text, as: UTF8.self)), value.isFinite else {
                throw error("number out of range", at: start)
            }
            return value
        }
    }
}
