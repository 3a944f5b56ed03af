/// A Varlink interface file as the generator needs it: its types and methods with the lines
/// they stand on and the `#` comments above them (their documentation). Errors are not read:
/// ProctorProtocol builds them by hand (`ProtocolErrors.swift`). The daemon's own parser
/// (Varlink's `VarlinkInterfaceDescription`) checks the files fully; this one accepts the
/// same grammar and refuses what it cannot turn into Swift.
struct InterfaceFile {
    indirect enum FieldType: Equatable {
        case bool, int, float, string, object
        case named(String)
        case optional(FieldType)
        case array(FieldType)
        case map(FieldType)
        case inlineEnum([String])
        case inlineStruct([Field])
    }

    struct Field: Equatable {
        var name: String
        var type: FieldType
        var line: Int
        /// The `#` comment lines just above the field, inside its struct's parentheses.
        var documentation: [String] = []
    }

    struct TypeDeclaration {
        enum Shape { case structure([Field]), enumeration([String]) }
        var name: String
        var documentation: [String]
        var line: Int
        var shape: Shape
    }

    struct Method {
        var name: String
        var documentation: [String]
        var line: Int
        /// The parameters and the reply.
        var input, output: [Field]
    }

    /// The file's path, as errors name it.
    var path: String
    var name = ""
    var documentation: [String] = []
    var types: [TypeDeclaration] = []
    var methods: [Method] = []

    init(path: String, text: String) throws(GenerationError) {
        self.path = path
        var parser = Parser(path: path, tokens: try Tokenizer.tokens(of: text, path: path))
        let interface = try parser.expect("interface")
        documentation = interface.documentation
        name = try parser.name().text
        while let keyword = parser.next() {
            switch keyword.text {
            case "type":
                let name = try parser.name()
                let shape: TypeDeclaration.Shape = switch try parser.typeBody() {
                case .cases(let cases): .enumeration(cases)
                case .fields(let fields): .structure(fields)
                }
                types.append(TypeDeclaration(name: name.text, documentation: keyword.documentation, line: keyword.line, shape: shape))
            case "method":
                let name = try parser.name()
                guard case .fields(let input) = try parser.typeBody() else {
                    throw parser.error(at: name, "method \(name.text)'s parameters are an enum; expected a struct such as (name: string)")
                }
                try parser.expect("->")
                guard case .fields(let output) = try parser.typeBody() else {
                    throw parser.error(at: name, "method \(name.text)'s reply is an enum; expected a struct such as (name: string)")
                }
                methods.append(Method(name: name.text, documentation: keyword.documentation, line: keyword.line,
                                      input: input, output: output))
            case "error":
                _ = try parser.name()
                _ = try parser.typeBody()
            default:
                throw parser.error(at: keyword, "found `\(keyword.text)`; expected `type`, `method` or `error`")
            }
        }
    }
}

/// What the generator refuses: where (file and line) and why. Printed as the compilers print
/// theirs, so that the build log points at the line.
struct GenerationError: Error, CustomStringConvertible, Equatable {
    var path: String
    var line: Int
    var message: String

    var description: String { "\(path):\(line): error: \(message)" }
}

private struct Token {
    var text: String
    var line: Int
    /// The `#` comment lines just above the token, without their `#` and first space.
    var documentation: [String]
}

private enum Tokenizer {
    static func tokens(of text: String, path: String) throws(GenerationError) -> [Token] {
        var tokens: [Token] = []
        var comment: [String] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            var line = Substring(rawLine)
            if line.trimmingLeadingSpaces.hasPrefix("#") {
                let body = line.trimmingLeadingSpaces.dropFirst()
                comment.append(String(body.hasPrefix(" ") ? body.dropFirst() : body))
                continue
            }
            if let hash = line.firstIndex(of: "#") { line = line[..<hash] }
            if line.allSatisfy(\.isWhitespace) {
                comment = []
                continue
            }
            var rest = line[...]
            while let first = rest.first {
                if first.isWhitespace {
                    rest = rest.dropFirst()
                    continue
                } else if rest.hasPrefix("->") || rest.hasPrefix("[]") {
                    tokens.append(Token(text: String(rest.prefix(2)), line: number, documentation: comment))
                    rest = rest.dropFirst(2)
                } else if "(),:?[]".contains(first) {
                    tokens.append(Token(text: String(first), line: number, documentation: comment))
                    rest = rest.dropFirst()
                } else if first.isLetter || first == "_" {
                    let word = rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." || $0 == "-" }
                    tokens.append(Token(text: String(word), line: number, documentation: comment))
                    rest = rest.dropFirst(word.count)
                } else {
                    throw GenerationError(path: path, line: number, message: "unexpected character `\(first)`")
                }
                comment = []
            }
        }
        return tokens
    }
}

private extension Substring {
    var trimmingLeadingSpaces: Substring { drop { $0 == " " || $0 == "\t" } }
}

private struct Parser {
    let path: String
    let tokens: [Token]
    var position = 0

    init(path: String, tokens: [Token]) {
        self.path = path
        self.tokens = tokens
    }

    mutating func next() -> Token? {
        guard position < tokens.count else { return nil }
        defer { position += 1 }
        return tokens[position]
    }

    var peek: String? { position < tokens.count ? tokens[position].text : nil }

    func error(at token: Token?, _ message: String) -> GenerationError {
        GenerationError(path: path, line: token?.line ?? tokens.last?.line ?? 1, message: message)
    }

    @discardableResult
    mutating func expect(_ text: String) throws(GenerationError) -> Token {
        let token = next()
        guard let token, token.text == text else {
            throw error(at: token, "found \(token.map { "`\($0.text)`" } ?? "the end of the file"); expected `\(text)`")
        }
        return token
    }

    mutating func name() throws(GenerationError) -> Token {
        let token = next()
        guard let token, let first = token.text.first, first.isLetter || first == "_" else {
            throw error(at: token, "found \(token.map { "`\($0.text)`" } ?? "the end of the file"); expected a name")
        }
        return token
    }

    enum TypeBody { case fields([InterfaceFile.Field]), cases([String]) }

    /// `( … )`: an enum's cases when its first member has no `:`, a struct's fields otherwise.
    mutating func typeBody() throws(GenerationError) -> TypeBody {
        try expect("(")
        if peek == ")" {
            _ = next()
            return .fields([])
        }
        var fields: [InterfaceFile.Field] = []
        var cases: [String] = []
        let isEnum = position + 1 < tokens.count && tokens[position + 1].text != ":"
        while true {
            let member = try name()
            if isEnum {
                cases.append(member.text)
            } else {
                try expect(":")
                fields.append(InterfaceFile.Field(name: member.text, type: try fieldType(), line: member.line,
                                                  documentation: member.documentation))
            }
            let separator = next()
            if separator?.text == ")" { break }
            guard separator?.text == "," else {
                throw error(at: separator, "found \(separator.map { "`\($0.text)`" } ?? "the end of the file"); expected `,` or `)`")
            }
        }
        return isEnum ? .cases(cases) : .fields(fields)
    }

    mutating func fieldType() throws(GenerationError) -> InterfaceFile.FieldType {
        switch peek {
        case "?":
            _ = next()
            return .optional(try fieldType())
        case "[]":
            _ = next()
            return .array(try fieldType())
        case "[":
            _ = next()
            try expect("string")
            try expect("]")
            return .map(try fieldType())
        case "(":
            return switch try typeBody() {
            case .fields(let fields): .inlineStruct(fields)
            case .cases(let cases): .inlineEnum(cases)
            }
        default:
            let word = try name()
            switch word.text {
            case "bool": return .bool
            case "int": return .int
            case "float": return .float
            case "string": return .string
            case "object": return .object
            default: return .named(word.text)
            }
        }
    }
}
