/// Makes the Swift message types of one interface from its file and its part of the mapping.
/// Refuses, naming the file and line, what it cannot map: an anonymous struct, a type that is
/// not declared, a mapping line that names nothing, a shared message whose methods disagree.
struct MessageGenerator {
    let interface: InterfaceFile
    let mapping: SwiftMapping.Interface
    let mappingPath: String
    let imports: [String]

    /// One struct to write: a struct type, a method's parameters or reply, a shared or grouped message.
    private struct Message {
        /// Its Swift path within the namespace: `Feedback`, `Decide.Request`, `SessionRequest`.
        var path: String
        var documentation: [String]
        var fields: [InterfaceFile.Field]
        /// Where its fields are declared, for errors.
        var line: Int
        /// A group held in one property: (group, property, fields).
        var group: (name: String, property: String, fields: Set<String>)?
        /// Field → the field it mirrors.
        var mirrors: [String: String] = [:]
        /// Field → Swift type from the mapping.
        var fieldTypes: [String: String] = [:]

        var name: String { String(path.split(separator: ".").last!) }
    }

    private func interfaceError(_ line: Int, _ message: String) -> GenerationError {
        GenerationError(path: interface.path, line: line, message: message)
    }

    private func mappingError(_ line: Int, _ message: String) -> GenerationError {
        GenerationError(path: mappingPath, line: line, message: message)
    }

    func swiftSource() throws(GenerationError) -> String {
        let declared = Dictionary(interface.types.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for (name, directive) in mapping.uses where declared[name] == nil {
            throw mappingError(directive.line, "`use \(name)`: \(interface.name) declares no type \(name)")
        }

        var messages: [String: Message] = [:]
        var order: [String] = []
        func add(_ message: Message) {
            messages[message.path] = message
            order.append(message.path)
        }
        for type in interface.types where mapping.uses[type.name] == nil {
            if case .structure(let fields) = type.shape {
                add(Message(path: type.name, documentation: type.documentation, fields: fields, line: type.line))
            }
        }

        // Shared messages: made from their first member; the others alias them.
        var aliases: [String: String] = [:]
        let methodMessages = Dictionary(uniqueKeysWithValues: interface.methods.flatMap { method in
            [("\(method.name).Request", (method, method.input, "parameters")), ("\(method.name).Reply", (method, method.output, "reply"))]
        })
        for shared in mapping.shared {
            var first: Message?
            for member in shared.members {
                guard let (method, fields, role) = methodMessages[member] else {
                    throw mappingError(shared.line, "`shared \(shared.name)`: \(interface.name) has no message \(member); expected Method.Request or Method.Reply")
                }
                guard aliases[member] == nil else { throw mappingError(shared.line, "\(member) is already shared as \(aliases[member]!)") }
                aliases[member] = shared.name
                guard let base = first else {
                    let documentation = ["The \(role == "reply" ? "reply" : "parameters") of "
                        + shared.members.map { "`\($0.split(separator: ".")[0])`" }.joined(separator: " and ") + "."]
                    first = Message(path: shared.name, documentation: documentation, fields: fields, line: method.line)
                    add(first!)
                    continue
                }
                for field in fields where !base.fields.contains(where: { $0.name == field.name && $0.type == field.type }) {
                    throw interfaceError(field.line, "field `\(field.name)` of \(method.name)'s \(role) differs from \(shared.name)'s (shared in \(mappingPath):\(shared.line)); expected the same name and type")
                }
                for field in base.fields where !fields.contains(where: { $0.name == field.name }) {
                    guard case .optional = field.type else {
                        throw interfaceError(method.line, "\(method.name)'s \(role) lack `\(field.name)`, which \(shared.name) requires (shared in \(mappingPath):\(shared.line)); expected it declared, or optional in \(shared.name)")
                    }
                }
            }
        }
        for method in interface.methods {
            for (suffix, fields) in [("Request", method.input), ("Reply", method.output)] {
                let path = "\(method.name).\(suffix)"
                guard aliases[path] == nil, !fields.isEmpty else { continue }
                let what = suffix == "Request" ? "The parameters" : "The reply"
                add(Message(path: path, documentation: ["\(what) of `\(method.name)`."], fields: fields, line: method.line))
            }
        }

        func message(at path: String, line: Int, _ directive: String) throws(GenerationError) -> String {
            let resolved = aliases[path] ?? path
            guard messages[resolved] != nil else {
                throw mappingError(line, "`\(directive)`: \(interface.name) has no message \(path); expected a struct type, Method.Request or Method.Reply")
            }
            return resolved
        }
        func field(at path: String, line: Int, _ directive: String) throws(GenerationError) -> (message: String, field: InterfaceFile.Field) {
            guard let dot = path.lastIndex(of: ".") else { throw mappingError(line, "`\(directive)`: expected MESSAGE.FIELD, found \(path)") }
            let owner = try message(at: String(path[..<dot]), line: line, directive)
            let name = String(path[path.index(after: dot)...])
            guard let field = messages[owner]!.fields.first(where: { $0.name == name }) else {
                throw mappingError(line, "`\(directive)`: \(owner) has no field `\(name)`")
            }
            return (owner, field)
        }

        for group in mapping.groups {
            var groupFields: [InterfaceFile.Field] = []
            for member in group.members {
                let path = try message(at: member, line: group.line, "group \(group.name)")
                var owner = messages[path]!
                for name in group.fields {
                    guard let field = owner.fields.first(where: { $0.name == name }) else {
                        throw interfaceError(owner.line, "\(member) lacks `\(name)`, a field of the group \(group.name) (\(mappingPath):\(group.line))")
                    }
                    if let known = groupFields.first(where: { $0.name == name }) {
                        guard known.type == field.type else {
                            throw interfaceError(field.line, "`\(name)` of \(member) differs from the group \(group.name)'s (\(mappingPath):\(group.line)); expected the same type")
                        }
                    } else {
                        groupFields.append(field)
                    }
                }
                owner.group = (group.name, group.property, Set(group.fields))
                messages[path] = owner
            }
            let documentation = ["Fields that "
                + group.members.map { "`\($0)`" }.joined(separator: " and ")
                + " carry as their own, held together in their `\(group.property)`."]
            add(Message(path: group.name, documentation: documentation, fields: groupFields, line: group.line))
        }

        for override in mapping.fieldTypes {
            let (owner, field) = try field(at: override.path, line: override.line, "field")
            messages[owner]!.fieldTypes[field.name] = override.swiftType
        }
        for mirror in mapping.mirrors {
            let (owner, field) = try field(at: mirror.path, line: mirror.line, "mirror")
            guard let source = messages[owner]!.fields.first(where: { $0.name == mirror.source }), source.type == field.type else {
                throw mappingError(mirror.line, "`mirror`: \(owner) has no field `\(mirror.source)` of the type of `\(field.name)`")
            }
            messages[owner]!.mirrors[field.name] = source.name
        }

        var source = "// Generated by generate-messages from \(baseName(interface.path)) and \(baseName(mappingPath)); do not edit.\n"
        source += imports.map { "public import \($0)\n" }.joined()
        source += "\n"
        source += "/// A method of `\(interface.name)`.\n"
        source += "public protocol \(mapping.methodProtocol): ProtocolMethod {}\n\n"
        source += "extension \(mapping.methodProtocol) {\n    public static var interface: String { \(mapping.namespace).interface }\n}\n\n"
        source += documentation(interface.documentation, indent: "")
        source += "public enum \(mapping.namespace) {\n"
        source += "    public static let interface = \"\(interface.name)\"\n"
        for type in interface.types where mapping.uses[type.name] == nil {
            if case .enumeration(let cases) = type.shape {
                source += "\n" + enumeration(type.name, cases, documentation: type.documentation, indent: "    ")
            }
        }
        for path in order where !path.contains(".") {
            source += "\n" + (try structure(messages[path]!, messages: messages, indent: "    "))
        }
        for method in interface.methods {
            source += "\n" + documentation(method.documentation, indent: "    ")
            source += "    public enum \(method.name): \(mapping.methodProtocol) {\n"
            source += "        public static let name = \"\(method.name)\"\n"
            for suffix in ["Request", "Reply"] {
                let path = "\(method.name).\(suffix)"
                if let shared = aliases[path] {
                    source += "        public typealias \(suffix) = \(shared)\n"
                } else if let message = messages[path] {
                    source += "\n" + (try structure(message, messages: messages, indent: "        "))
                } else {
                    source += "        public typealias \(suffix) = NoFields\n"
                }
            }
            source += "    }\n"
        }
        source += "\n    /// Every method of the interface, for checks against the interface file.\n"
        source += "    public static let methods: [any ProtocolMethod.Type] = [\n"
        source += interface.methods.map { "        \($0.name).self,\n" }.joined()
        source += "    ]\n"
        source += "\n    /// Every struct type the interface declares, by its name there, for checks against the file.\n"
        let declaredMessages = interface.types.compactMap { type -> String? in
            guard mapping.uses[type.name] == nil, case .structure = type.shape else { return nil }
            return "        \"\(type.name)\": \(type.name).self,\n"
        }
        source += "    static let declaredMessages: [String: any ProtocolMessage.Type] = "
        source += declaredMessages.isEmpty ? "[:]\n" : "[\n" + declaredMessages.joined() + "    ]\n"
        source += "}\n"
        return source
    }

    private func baseName(_ path: String) -> String { String(path.split(separator: "/").last ?? Substring(path)) }

    private func documentation(_ lines: [String], indent: String) -> String {
        lines.map { "\(indent)///\($0.isEmpty ? "" : " ")\($0)\n" }.joined()
    }

    private func enumeration(_ name: String, _ cases: [String], documentation lines: [String], indent: String) -> String {
        documentation(lines, indent: indent)
            + "\(indent)public enum \(name): String, Sendable, CaseIterable, Codable {\n"
            + "\(indent)    case \(cases.map(identifier).joined(separator: ", "))\n"
            + "\(indent)}\n"
    }

    /// The Swift type of `field` in `message`, and the enum to nest in the message for an inline one.
    private func swiftType(of field: InterfaceFile.Field, in message: Message) throws(GenerationError)
        -> (type: String, optional: Bool, nested: [String]?)
    {
        var type = field.type
        var optional = false
        if case .optional(let wrapped) = type {
            type = wrapped
            optional = true
        }
        if let mapped = message.fieldTypes[field.name] { return (mapped, optional, nil) }
        var nested: [String]?
        func resolve(_ type: InterfaceFile.FieldType) throws(GenerationError) -> String {
            switch type {
            case .bool: return "Bool"
            case .int: return "Int"
            case .float: return "Double"
            case .string: return "String"
            case .object: return "[String: JSONValue]"
            case .named(let name):
                if let use = mapping.uses[name] { return use.words[2] }
                guard interface.types.contains(where: { $0.name == name }) else {
                    throw interfaceError(field.line, "`\(field.name)` of \(message.path) has the type \(name), which \(interface.name) does not declare; expected a type declared with `type \(name) (…)`")
                }
                return name
            case .optional:
                throw interfaceError(field.line, "`\(field.name)` of \(message.path) is optional inside an array, map or optional; expected `?` only on the field itself")
            case .array(let element): return "[\(try resolve(element))]"
            case .map(let value): return "[String: \(try resolve(value))]"
            case .inlineEnum(let cases):
                guard nested == nil else {
                    throw interfaceError(field.line, "`\(field.name)` of \(message.path) has an enum nested in an array or map; expected a type declared with `type`")
                }
                nested = cases
                return typeName(forField: field.name)
            case .inlineStruct:
                throw interfaceError(field.line, "`\(field.name)` of \(message.path) is an anonymous struct, which has no Swift name; expected a type declared with `type NAME (…)` and named here")
            }
        }
        return (try resolve(type), optional, nested)
    }

    private func typeName(forField name: String) -> String { name.prefix(1).uppercased() + name.dropFirst() }

    private func structure(_ message: Message, messages: [String: Message], indent: String) throws(GenerationError) -> String {
        struct Property { var name: String; var type: String; var optional: Bool; var mirrors: String?; var group: Bool }
        var properties: [Property] = []
        var nested = ""
        for field in message.fields {
            if let group = message.group, group.fields.contains(field.name) {
                if !properties.contains(where: \.group) {
                    properties.append(Property(name: group.property, type: group.name, optional: false, mirrors: nil, group: true))
                }
                continue
            }
            let (type, optional, cases) = try swiftType(of: field, in: message)
            if let cases { nested += enumeration(type, cases, documentation: [], indent: indent + "    ") + "\n" }
            properties.append(Property(name: field.name, type: type, optional: optional, mirrors: message.mirrors[field.name], group: false))
        }
        let mirrored = Dictionary(uniqueKeysWithValues: properties.compactMap { property in property.mirrors.map { ($0, property.name) } })
        let inner = indent + "    "
        var source = documentation(message.documentation, indent: indent)
        source += "\(indent)public struct \(message.name): ProtocolMessage {\n"
        source += nested
        for property in properties {
            let type = property.type + (property.optional ? "?" : "")
            if property.mirrors != nil {
                source += "\(inner)/// Always `\(property.mirrors!)`.\n"
                source += "\(inner)public private(set) var \(identifier(property.name)): \(type)\n"
            } else if let mirror = mirrored[property.name] {
                source += "\(inner)public var \(identifier(property.name)): \(type) { didSet { \(identifier(mirror)) = \(identifier(property.name)) } }\n"
            } else {
                source += "\(inner)public var \(identifier(property.name)): \(type)\n"
            }
        }
        let parameters = properties.filter { $0.mirrors == nil }.map { property in
            "\(identifier(property.name)): \(property.type)\(property.optional ? "? = nil" : "")"
        }
        source += "\n\(inner)public init(\(parameters.joined(separator: ", "))) {\n"
        for property in properties {
            source += "\(inner)    self.\(identifier(property.name)) = \(identifier(property.mirrors ?? property.name))\n"
        }
        source += "\(inner)}\n"
        let keys = properties.filter { !$0.group }.map { identifier($0.name) }
        if !keys.isEmpty {
            source += "\n\(inner)enum CodingKeys: String, CodingKey {\n\(inner)    case \(keys.joined(separator: ", "))\n\(inner)}\n"
        }
        if let group = message.group {
            // The group's fields are the message's own, beside these: each side reads and
            // writes its fields in the same object.
            source += "\n\(inner)public init(from decoder: any Decoder) throws {\n"
            source += "\(inner)    let fields = try decoder.container(keyedBy: CodingKeys.self)\n"
            for property in properties {
                if property.group {
                    source += "\(inner)    \(identifier(property.name)) = try \(group.name)(from: decoder)\n"
                } else {
                    let decode = property.optional ? "decodeIfPresent" : "decode"
                    source += "\(inner)    \(identifier(property.name)) = try fields.\(decode)(\(property.type).self, forKey: .\(identifier(property.name)))\n"
                }
            }
            source += "\(inner)}\n\n"
            source += "\(inner)public func encode(to encoder: any Encoder) throws {\n"
            source += "\(inner)    try \(identifier(group.property)).encode(to: encoder)\n"
            source += "\(inner)    var fields = encoder.container(keyedBy: CodingKeys.self)\n"
            for property in properties where !property.group {
                let encode = property.optional ? "encodeIfPresent" : "encode"
                source += "\(inner)    try fields.\(encode)(\(identifier(property.name)), forKey: .\(identifier(property.name)))\n"
            }
            source += "\(inner)}\n"
        }
        source += "\(indent)}\n"
        return source
    }

    private static let keywords: Set<String> = [
        "associatedtype", "class", "deinit", "enum", "extension", "func", "import", "init", "inout", "internal", "let",
        "operator", "private", "protocol", "public", "static", "struct", "subscript", "typealias", "var", "break", "case",
        "continue", "default", "defer", "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return",
        "switch", "where", "while", "as", "catch", "false", "is", "nil", "rethrows", "super", "self", "Self", "throw",
        "throws", "true", "try", "Type", "Protocol",
    ]

    private func identifier(_ name: String) -> String { Self.keywords.contains(name) ? "`\(name)`" : name }
}
