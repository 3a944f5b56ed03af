/// Recursive-descent parser for the Varlink IDL. White space and `#` comments may appear
/// between any two tokens.
struct VarlinkInterfaceParser {
    struct Parsed {
        var name = ""
        var types: [String: VarlinkType] = [:]
        var methods: [String: VarlinkMethodSignature] = [:]
        var errors: [String: [VarlinkField]] = [:]
    }

    private let bytes: [UInt8]
    private var index = 0
    /// How deeply types are nested right now; bounded so hostile input cannot exhaust the stack.
    private var depth = 0
    static let maxDepth = 64
    /// Named types referenced anywhere, with where, to check once all types are known.
    private var references: [(name: String, offset: Int)] = []

    init(text: String) { bytes = Array(text.utf8) }

    mutating func parseInterface() throws(VarlinkInterfaceParseError) -> Parsed {
        var parsed = Parsed()
        skipTrivia()
        try expectKeyword("interface")
        parsed.name = try interfaceName()
        var seen: Set<String> = []
        while true {
            skipTrivia()
            if index == bytes.count { break }
            let memberStart = index
            let keyword = word()
            skipTrivia()
            let nameStart = index
            let name = try typeName(of: keyword.isEmpty ? "member" : keyword)
            guard seen.insert(name).inserted else { throw error("\(name) is defined twice", at: nameStart) }
            switch keyword {
            case "type":
                skipTrivia()
                parsed.types[name] = try structOrEnum()
            case "method":
                let input = try structFields()
                skipTrivia()
                guard consume("->") else { throw error("expected '->' after the input of method \(name)") }
                let output = try structFields()
                parsed.methods[name] = VarlinkMethodSignature(name: name, input: input, output: output)
            case "error":
                parsed.errors[name] = try structFields()
            default:
                throw error("expected 'type', 'method' or 'error'", at: memberStart)
            }
        }
        if seen.isEmpty { throw error("the interface defines no type, method or error") }
        for reference in references where parsed.types[reference.name] == nil {
            throw error("unknown type \(reference.name)", at: reference.offset)
        }
        return parsed
    }

    // MARK: Types

    private mutating func type() throws(VarlinkInterfaceParseError) -> VarlinkType {
        depth += 1
        defer { depth -= 1 }
        if depth > Self.maxDepth { throw error("types nested deeper than \(Self.maxDepth) levels") }
        skipTrivia()
        if consume("?") {
            skipTrivia()
            if peek == UInt8(ascii: "?") { throw error("'?' cannot apply to an optional type") }
            return .maybe(try type())
        }
        if consume("[]") { return .array(try type()) }
        if consume("[") {
            skipTrivia()
            let keyStart = index
            guard word() == "string" else { throw error("expected 'string' in a map type '[string]T'", at: keyStart) }
            skipTrivia()
            guard consume("]") else { throw error("expected ']' after '[string'") }
            return .map(try type())
        }
        if peek == UInt8(ascii: "(") { return try structOrEnum() }
        let start = index
        let name = word()
        switch name {
        case "bool": return .bool
        case "int": return .int
        case "float": return .float
        case "string": return .string
        case "object": return .object
        case "": throw error("expected a type")
        default:
            guard Self.isTypeName(name) else { throw error("\(name) is not a type (type names start with an upper-case letter)", at: start) }
            references.append((name, start))
            return .named(name)
        }
    }

    /// `(a: T, b: U)` or `(one, two)`; `()` is the empty struct.
    private mutating func structOrEnum() throws(VarlinkInterfaceParseError) -> VarlinkType {
        let open = index
        guard consume("(") else { throw error("expected '('") }
        skipTrivia()
        if consume(")") { return .struct([]) }
        _ = try fieldName()
        skipTrivia()
        let isStruct = peek == UInt8(ascii: ":")
        index = open
        return isStruct ? .struct(try structFields()) : try enumCases()
    }

    private mutating func structFields() throws(VarlinkInterfaceParseError) -> [VarlinkField] {
        skipTrivia()
        guard consume("(") else { throw error("expected '('") }
        var fields: [VarlinkField] = []
        var names: Set<String> = []
        skipTrivia()
        if consume(")") { return fields }
        while true {
            skipTrivia()
            let start = index
            let name = try fieldName()
            guard names.insert(name).inserted else { throw error("field \(name) appears twice", at: start) }
            skipTrivia()
            guard consume(":") else { throw error("expected ':' after the field name \(name)") }
            fields.append(VarlinkField(name: name, type: try type()))
            skipTrivia()
            if consume(")") { return fields }
            guard consume(",") else { throw error("expected ',' or ')' after the field \(name)") }
        }
    }

    private mutating func enumCases() throws(VarlinkInterfaceParseError) -> VarlinkType {
        guard consume("(") else { throw error("expected '('") }
        var cases: [String] = []
        while true {
            skipTrivia()
            let start = index
            let name = try fieldName()
            if cases.contains(name) { throw error("enum value \(name) appears twice", at: start) }
            cases.append(name)
            skipTrivia()
            if consume(")") { return .enum(cases) }
            guard consume(",") else { throw error("expected ',' or ')' after the enum value \(name)") }
        }
    }

    // MARK: Names

    /// `[A-Za-z](_?[A-Za-z0-9])*`
    private mutating func fieldName() throws(VarlinkInterfaceParseError) -> String {
        let start = index
        let name = word()
        guard Self.isFieldName(name) else {
            throw error(name.isEmpty ? "expected a field name" : "\(name) is not a valid field name", at: start)
        }
        return name
    }

    /// `[A-Z][A-Za-z0-9]*`, for types, methods and errors.
    private mutating func typeName(of kind: String) throws(VarlinkInterfaceParseError) -> String {
        let start = index
        let name = word()
        guard Self.isTypeName(name) else {
            throw error(name.isEmpty ? "expected the name of the \(kind)"
                        : "\(name) is not a valid \(kind) name (an upper-case letter, then letters and digits)", at: start)
        }
        return name
    }

    /// Reverse-domain: at least two dot-separated parts of letters, digits and inner hyphens,
    /// the first starting with a letter.
    private mutating func interfaceName() throws(VarlinkInterfaceParseError) -> String {
        skipTrivia()
        let start = index
        while index < bytes.count, Self.isWordByte(bytes[index]) || bytes[index] == UInt8(ascii: ".")
            || bytes[index] == UInt8(ascii: "-") { index += 1 }
        let name = String(decoding: bytes[start..<index], as: UTF8.self)
        guard VarlinkNames.isInterfaceName(name) else {
            throw error(name.isEmpty ? "expected an interface name" : "\(name) is not a valid interface name", at: start)
        }
        return name
    }

    static func isFieldName(_ name: String) -> Bool {
        let u = Array(name.utf8)
        guard let first = u.first, isLetter(first) else { return false }
        for (i, b) in u.enumerated().dropFirst() {
            if b == UInt8(ascii: "_") {
                guard i + 1 < u.count, u[i + 1] != UInt8(ascii: "_") else { return false }
            } else if !isLetter(b) && !isDigit(b) {
                return false
            }
        }
        return true
    }

    static func isTypeName(_ name: String) -> Bool {
        let u = Array(name.utf8)
        guard let first = u.first, first >= UInt8(ascii: "A"), first <= UInt8(ascii: "Z") else { return false }
        return u.allSatisfy { isLetter($0) || isDigit($0) }
    }

    static func isLetter(_ b: UInt8) -> Bool { (b | 0x20) >= UInt8(ascii: "a") && (b | 0x20) <= UInt8(ascii: "z") }
    static func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }
    static func isWordByte(_ b: UInt8) -> Bool { isLetter(b) || isDigit(b) || b == UInt8(ascii: "_") }

    // MARK: Tokens

    private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func word() -> String {
        let start = index
        while index < bytes.count, Self.isWordByte(bytes[index]) { index += 1 }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func consume(_ token: StaticString) -> Bool {
        let count = token.utf8CodeUnitCount
        guard bytes.count - index >= count else { return false }
        let matches = token.withUTF8Buffer { token in
            token.indices.allSatisfy { bytes[index + $0] == token[$0] }
        }
        if matches { index += count }
        return matches
    }

    private mutating func expectKeyword(_ keyword: String) throws(VarlinkInterfaceParseError) {
        let start = index
        guard word() == keyword else { throw error("expected '\(keyword)'", at: start) }
    }

    private mutating func skipTrivia() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): index += 1
            case UInt8(ascii: "#"):
                while index < bytes.count, bytes[index] != UInt8(ascii: "\n") { index += 1 }
            default: return
            }
        }
    }

    private func error(_ message: String, at offset: Int? = nil) -> VarlinkInterfaceParseError {
        let offset = min(offset ?? index, bytes.count)
        var line = 1
        var lineStart = 0
        for i in 0..<offset where bytes[i] == UInt8(ascii: "\n") {
            line += 1
            lineStart = i + 1
        }
        let column = bytes[lineStart..<offset].reduce(1) { $0 + (($1 & 0xC0) == 0x80 ? 0 : 1) }
        return VarlinkInterfaceParseError(message: message, line: line, column: column)
    }
}

/// Name rules of the Varlink specification.
public enum VarlinkNames {
    /// Whether `name` is a valid interface name: two or more dot-separated parts of letters,
    /// digits and hyphens, each starting and ending with a letter or digit, the first part
    /// starting with a letter.
    public static func isInterfaceName(_ name: String) -> Bool {
        let parts = name.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count >= 2, let first = parts[0].first, VarlinkInterfaceParser.isLetter(first) else { return false }
        return parts.allSatisfy { part in
            guard let head = part.first, let tail = part.last, head != UInt8(ascii: "-"), tail != UInt8(ascii: "-") else {
                return false
            }
            return part.allSatisfy { VarlinkInterfaceParser.isLetter($0) || VarlinkInterfaceParser.isDigit($0) || $0 == UInt8(ascii: "-") }
        }
    }
}
