public import JSONCore

// Decide is the hot call: its request and reply are read and written by hand, not through
// their `Codable` (which `MessageCodingTests` checks them against). Through the generic coder
// a request of this shape takes ~4× the instructions to read and a reply ~3× to write
// (~12 000 more a call, the boxes and witness calls of `Codable`): over a tenth of the
// socket round trip that proctord's `Decide` is measured against. These members are the
// types' `ProtocolMessage` witnesses, ahead of the protocol's `Codable` defaults.

extension Agent.Decide.Request {
    public init(_ parameters: [String: JSONValue]) throws(MalformedMessage) {
        let fields = FieldReader(parameters, keys: CodingKeys.self)
        session = try fields.required(.session, .string)
        action = try fields.choice(.action)
        target = try fields.optional(.target, .string)
        size = try fields.optional(.size, .integer)
    }

    public var fields: [String: JSONValue] {
        var fields: [String: JSONValue] = ["session": .string(session), "action": .string(action.rawValue)]
        if let target { fields["target"] = .string(target) }
        if let size { fields["size"] = .number(size) }
        return fields
    }
}

extension Agent.Decide.Reply {
    public init(_ parameters: [String: JSONValue]) throws(MalformedMessage) {
        let fields = FieldReader(parameters, keys: CodingKeys.self)
        allowed = try fields.required(.allowed, .boolean)
        rule = try fields.required(.rule, .string)
        reason = try fields.required(.reason, .string)
    }

    public var fields: [String: JSONValue] {
        ["allowed": .bool(allowed), "rule": .string(rule), "reason": .string(reason)]
    }
}
