public import JSONCore

/// One message of the protocol — a method's parameters, its reply, or a type nested in
/// them — read from and written as the JSON object on the wire. Each message type is the
/// one place its field names are spelled; `ProctorProtocolTests` checks them against the
/// `.varlink` files.
public protocol ProtocolMessage: Sendable, Equatable {
    /// Reads the message, naming the first field that is missing or of the wrong shape.
    init(reading message: MessageReader) throws(MalformedMessage)
    /// The message's fields as sent: absent optionals are left out.
    var fields: [String: JSONValue] { get }
}

extension ProtocolMessage {
    /// Reads the message from the parameters of a call or reply.
    public init(_ parameters: [String: JSONValue], path: String = "") throws(MalformedMessage) {
        try self.init(reading: MessageReader(parameters, path: path))
    }

    /// The message as a JSON object, for nesting in another message.
    public var json: JSONValue { .object(fields) }
}

/// A method of `io.proctor.Agent` or `io.proctor.Admin`: its name and the types of its
/// parameters and reply.
public protocol ProtocolMethod: Sendable {
    associatedtype Request: ProtocolMessage
    associatedtype Reply: ProtocolMessage
    /// The interface that defines the method (`io.proctor.Agent`).
    static var interface: String { get }
    /// The method's name within the interface (`Register`).
    static var name: String { get }
}

extension ProtocolMethod {
    /// `interface.name`, as a call names the method.
    public static var qualifiedName: String { "\(interface).\(name)" }
}

/// The parameters or reply of a method that has none.
public struct NoFields: ProtocolMessage {
    public init() {}
    public init(reading message: MessageReader) {}
    public var fields: [String: JSONValue] { [:] }
}

/// A message that does not have the contract's shape: which field, and what is wrong.
public struct MalformedMessage: Error, Sendable, Equatable, CustomStringConvertible {
    /// The field's path within the message: `policy.version`, `directives[0].id`.
    public let field: String
    /// What is wrong, following the field's name: `is missing, expected a string`.
    public let reason: String

    public init(field: String, reason: String) {
        self.field = field
        self.reason = reason
    }

    public var description: String { "\(field) \(reason)" }
}

/// Reads a message's fields by name and type; each reader knows its place in the whole
/// message, so an error names the full path of the field.
public struct MessageReader {
    public let members: [String: JSONValue]
    /// The path of this object within the message, empty at the top.
    public let path: String

    public init(_ members: [String: JSONValue], path: String = "") {
        self.members = members
        self.path = path
    }

    /// The path of `key` within the message.
    public func path(of key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// A field that is absent or null (Varlink treats both as "not given").
    private func present(_ key: String) -> JSONValue? {
        guard let value = members[key], !value.isNull else { return nil }
        return value
    }

    /// The error for a field that is missing or of the wrong type.
    public func wrongShape(_ key: String, expected: String) -> MalformedMessage {
        let found = members[key].map { "is \($0.typeDescription)" } ?? "is missing"
        return MalformedMessage(field: path(of: key), reason: "\(found), expected \(expected)")
    }

    private func required<T>(_ key: String, _ expected: String, _ convert: (JSONValue) -> T?) throws(MalformedMessage) -> T {
        guard let value = present(key).flatMap(convert) else { throw wrongShape(key, expected: expected) }
        return value
    }

    private func optional<T>(_ key: String, _ expected: String, _ convert: (JSONValue) -> T?) throws(MalformedMessage) -> T? {
        guard let found = present(key) else { return nil }
        guard let value = convert(found) else { throw wrongShape(key, expected: "\(expected) or null") }
        return value
    }

    public func string(_ key: String) throws(MalformedMessage) -> String { try required(key, "a string", \.stringValue) }
    public func optionalString(_ key: String) throws(MalformedMessage) -> String? { try optional(key, "a string", \.stringValue) }
    public func int(_ key: String) throws(MalformedMessage) -> Int { try required(key, "an integer", \.intValue) }
    public func optionalInt(_ key: String) throws(MalformedMessage) -> Int? { try optional(key, "an integer", \.intValue) }
    public func double(_ key: String) throws(MalformedMessage) -> Double { try required(key, "a number", \.doubleValue) }
    public func bool(_ key: String) throws(MalformedMessage) -> Bool { try required(key, "a boolean", \.boolValue) }
    public func optionalBool(_ key: String) throws(MalformedMessage) -> Bool? { try optional(key, "a boolean", \.boolValue) }

    /// A free-form object (Varlink `object`).
    public func object(_ key: String) throws(MalformedMessage) -> [String: JSONValue] {
        try required(key, "an object", \.objectValue)
    }

    public func optionalObject(_ key: String) throws(MalformedMessage) -> [String: JSONValue]? {
        try optional(key, "an object", \.objectValue)
    }

    /// A value of an enum type, by its name on the wire.
    public func choice<Choice: RawRepresentable & CaseIterable>(_ key: String) throws(MalformedMessage) -> Choice
        where Choice.RawValue == String
    {
        try required(key, Self.oneOf(Choice.self)) { $0.stringValue.flatMap(Choice.init(rawValue:)) }
    }

    public func optionalChoice<Choice: RawRepresentable & CaseIterable>(_ key: String) throws(MalformedMessage) -> Choice?
        where Choice.RawValue == String
    {
        try optional(key, Self.oneOf(Choice.self)) { $0.stringValue.flatMap(Choice.init(rawValue:)) }
    }

    static func oneOf<Choice: RawRepresentable & CaseIterable>(_ type: Choice.Type) -> String where Choice.RawValue == String {
        "one of " + Choice.allCases.map(\.rawValue).joined(separator: ", ")
    }

    /// A nested message (a struct type of the interface).
    public func message<Nested: ProtocolMessage>(_ key: String, as type: Nested.Type = Nested.self) throws(MalformedMessage) -> Nested {
        try Nested(reading: MessageReader(try object(key), path: path(of: key)))
    }

    public func optionalMessage<Nested: ProtocolMessage>(_ key: String, as type: Nested.Type = Nested.self)
        throws(MalformedMessage) -> Nested?
    {
        guard let members = try optionalObject(key) else { return nil }
        return try Nested(reading: MessageReader(members, path: path(of: key)))
    }

    /// An array, each element read by `element` (given the element and its path).
    public func array<Element>(_ key: String, _ element: (JSONValue, String) throws(MalformedMessage) -> Element)
        throws(MalformedMessage) -> [Element]
    {
        let values = try required(key, "an array", \.arrayValue)
        var elements: [Element] = []
        elements.reserveCapacity(values.count)
        for (index, value) in values.enumerated() {
            elements.append(try element(value, "\(path(of: key))[\(index)]"))
        }
        return elements
    }

    public func optionalArray<Element>(_ key: String, _ element: (JSONValue, String) throws(MalformedMessage) -> Element)
        throws(MalformedMessage) -> [Element]?
    {
        guard present(key) != nil else { return nil }
        return try array(key, element)
    }

    /// An array of nested messages.
    public func messages<Nested: ProtocolMessage>(_ key: String, as type: Nested.Type = Nested.self)
        throws(MalformedMessage) -> [Nested]
    {
        try array(key) { value, path throws(MalformedMessage) in
            guard let members = value.objectValue else {
                throw MalformedMessage(field: path, reason: "is \(value.typeDescription), expected an object")
            }
            return try Nested(reading: MessageReader(members, path: path))
        }
    }

    /// An array of nested messages that may be absent.
    public func optionalMessages<Nested: ProtocolMessage>(_ key: String, as type: Nested.Type = Nested.self)
        throws(MalformedMessage) -> [Nested]?
    {
        guard present(key) != nil else { return nil }
        return try messages(key)
    }

    public func strings(_ key: String) throws(MalformedMessage) -> [String] {
        try array(key, Self.stringElement)
    }

    public func optionalStrings(_ key: String) throws(MalformedMessage) -> [String]? {
        try optionalArray(key, Self.stringElement)
    }

    static func stringElement(_ value: JSONValue, _ path: String) throws(MalformedMessage) -> String {
        guard let text = value.stringValue else {
            throw MalformedMessage(field: path, reason: "is \(value.typeDescription), expected a string")
        }
        return text
    }
}

extension JSONValue {
    /// An array of strings.
    public static func strings(_ values: [String]) -> JSONValue { .array(values.map(JSONValue.string)) }
    /// An array of messages.
    public static func messages(_ values: [some ProtocolMessage]) -> JSONValue { .array(values.map(\.json)) }
}
