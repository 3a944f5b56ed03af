import JSONCore

/// A type in a Varlink interface definition.
public indirect enum VarlinkType: Sendable, Hashable, CustomStringConvertible {
    case bool
    case int
    case float
    case string
    /// Any JSON object (free-form data the interface does not describe).
    case object
    /// `[]T`
    case array(VarlinkType)
    /// `[string]T`: a JSON object whose members all have type T.
    case map(VarlinkType)
    /// `?T`: may be absent or null.
    case maybe(VarlinkType)
    /// A `type` defined in the same interface.
    case named(String)
    case `struct`([VarlinkField])
    case `enum`([String])

    public var description: String {
        switch self {
        case .bool: "bool"
        case .int: "int"
        case .float: "float"
        case .string: "string"
        case .object: "object"
        case .array(let element): "[]\(element)"
        case .map(let element): "[string]\(element)"
        case .maybe(let wrapped): "?\(wrapped)"
        case .named(let name): name
        case .struct(let fields): "(\(fields.map { "\($0.name): \($0.type)" }.joined(separator: ", ")))"
        case .enum(let cases): "(\(cases.joined(separator: ", ")))"
        }
    }

    /// Whether `value` conforms to the type; named types are looked up in `types`.
    func accepts(_ value: JSONValue, types: [String: VarlinkType]) -> Bool {
        switch (self, value) {
        case (.maybe, .null): return true
        case (.maybe(let wrapped), _): return wrapped.accepts(value, types: types)
        case (.bool, .bool), (.float, .number), (.string, .string), (.object, .object): return true
        case (.int, .number): return value.intValue != nil
        case (.array(let element), .array(let values)): return values.allSatisfy { element.accepts($0, types: types) }
        case (.map(let element), .object(let members)): return members.values.allSatisfy { element.accepts($0, types: types) }
        case (.named(let name), _): return types[name]?.accepts(value, types: types) ?? false
        case (.enum(let cases), .string(let s)): return cases.contains(s)
        case (.struct(let fields), .object(let members)):
            return Self.firstInvalidMember(of: members, fields: fields, types: types) == nil
        default: return false
        }
    }

    var isOptional: Bool { if case .maybe = self { true } else { false } }

    /// The struct check for nested values: a linear search of the (few) fields, so checking
    /// a value allocates nothing.
    static func firstInvalidMember(of members: [String: JSONValue], fields: [VarlinkField],
                                   types: [String: VarlinkType]) -> String? {
        for (name, value) in members {
            guard let field = fields.first(where: { $0.name == name }), field.type.accepts(value, types: types) else {
                return name
            }
        }
        if members.count < fields.count {  // every member is a known field, so equal counts mean none is missing
            for field in fields where !field.type.isOptional && members[field.name] == nil { return field.name }
        }
        return nil
    }
}

/// A named member of a struct, or a method's input or output parameter.
public struct VarlinkField: Sendable, Hashable {
    public var name: String
    public var type: VarlinkType
    public init(name: String, type: VarlinkType) {
        self.name = name
        self.type = type
    }
}

/// A method's input fields prepared once for checking every call's parameters.
struct VarlinkStructShape: Sendable {
    /// In their declared order (a name declared twice: its first declaration), which is the
    /// order a call's faults are looked for in.
    let fields: [VarlinkField]

    init(_ fields: [VarlinkField]) {
        var seen = Set<String>()
        self.fields = fields.filter { seen.insert($0.name).inserted }
    }

    /// The name of the first member that is wrong: the declared fields in their order (one
    /// missing and not optional, or of the wrong type), then, of the members the interface
    /// does not know, the first by its UTF-8 bytes; `nil` when all conform. The same members
    /// always get the same name: a dictionary's order would vary from one parse to the next.
    func firstInvalidMember(of members: [String: JSONValue], types: [String: VarlinkType]) -> String? {
        var known = 0
        for field in fields {
            guard let value = members[field.name] else {
                if field.type.isOptional { continue }
                return field.name
            }
            guard field.type.accepts(value, types: types) else { return field.name }
            known += 1
        }
        guard known < members.count else { return nil }
        return members.keys.filter { name in !fields.contains { $0.name == name } }.min(by: JSONValue.utf8Less)
    }
}
