public import JSONCore

/// One message of the protocol — a method's parameters, its reply, or a type nested in
/// them — read from and written as the JSON object on the wire. A message type is its
/// stored properties: their names are its fields (`ProctorProtocolTests` checks them
/// against the `.varlink` files) and `Codable`, synthesized, reads and writes them through
/// `MessageDecoder` and `MessageEncoder`:
///
/// - a field of type `T?` may be absent or null, and is left out when nil;
/// - an enum whose raw values are strings (`CaseIterable`) is sent as its raw value;
/// - `[String: JSONValue]` is a free-form object (Varlink `object`);
/// - a field of the wrong shape is a `MalformedMessage` naming it by its path in the message
///   (`apps[0].appId`), what was found and what was expected;
/// - fields the type does not know are ignored (an older peer may send fewer or more).
///
/// A type on the hot request path may read and write its fields by hand instead
/// (`Agent.Decide`), keeping its `Codable` for tests to compare the two.
public protocol ProtocolMessage: Codable, Sendable, Equatable {
    /// Reads the message from the parameters of a call or reply.
    init(_ parameters: [String: JSONValue]) throws(MalformedMessage)
    /// The message's fields as sent: absent optionals are left out.
    var fields: [String: JSONValue] { get }
    /// The message's rules beyond its fields' types (a time's format, a number's range),
    /// checked once it is read; `field` names a field of this message. None by default.
    func check() throws(MalformedMessage)
}

extension ProtocolMessage {
    public init(_ parameters: [String: JSONValue]) throws(MalformedMessage) {
        self = try MessageDecoder.read(Self.self, from: parameters)
    }

    public var fields: [String: JSONValue] { MessageEncoder.fields(of: self) }

    public func check() {}

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

    /// `field` holds a string that is not one of `choices`.
    static func notOneOf(_ field: String, _ text: String, _ choices: some Sequence<String>) -> MalformedMessage {
        MalformedMessage(field: field, reason: "is \(quoted(text)), expected one of \(choices.joined(separator: ", "))")
    }

    /// A string from the peer in a message: quoted and cut to 64 characters.
    static func quoted(_ text: String) -> String { "\"\(text.prefix(64))\"" }
}

extension RFC3339 {
    /// Refuses `text`, the value of `field`, when it is given and is not an RFC 3339 time.
    static func check(_ text: String?, field: String) throws(MalformedMessage) {
        if let text, milliseconds(text) == nil {
            throw MalformedMessage(field: field, reason: "\(MalformedMessage.quoted(text)) is not an RFC 3339 time such as 2026-11-29T12:00:00Z")
        }
    }
}
