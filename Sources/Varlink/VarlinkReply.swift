public import JSONCore

/// A Varlink reply: the JSON object a service sends back, terminated by a NUL byte.
public struct VarlinkReply: Sendable, Hashable {
    /// The method's output, or the error's parameters when `error` is set.
    public var parameters: [String: JSONValue]
    /// More replies to the same call follow (only for calls made with `more`).
    public var continues: Bool
    /// The fully qualified error name when the call failed.
    public var error: String?

    public init(parameters: [String: JSONValue] = [:], continues: Bool = false, error: String? = nil) {
        self.parameters = parameters
        self.continues = continues
        self.error = error
    }

    /// The final reply carrying `error`.
    public init(error: VarlinkError) {
        self.init(parameters: error.parameters, continues: false, error: error.name)
    }

    /// Decodes a reply from a parsed message object.
    public init(message: [String: JSONValue]) throws(VarlinkFrameError) {
        var parameters: [String: JSONValue] = [:]
        switch message["parameters"] {
        case nil, .null?: break
        case .object(let members)?: parameters = members
        case let other?: throw .invalidField(name: "parameters", expected: "an object", found: other.typeDescription)
        }
        var error: String?
        switch message["error"] {
        case nil, .null?: break
        case .string(let name)?: error = name
        case let other?: throw .invalidField(name: "error", expected: "a string", found: other.typeDescription)
        }
        self.init(parameters: parameters, continues: try VarlinkCall.flag("continues", in: message), error: error)
    }

    /// Appends the reply as a NUL-terminated message. `parameters` is always present (clients
    /// such as Python's `varlink` expect it); `continues` and `error` only when set.
    public func encode(to out: inout [UInt8]) {
        Self.encode(continues: continues, error: error, to: &out) { JSONValue.object(parameters).write(to: &$0) }
    }

    /// Appends a reply whose parameters `writeParameters` writes as one JSON object: the
    /// envelope of `encode(to:)`, for replies written from a typed value
    /// (`VarlinkDirectReply`) as well as from a dictionary.
    @usableFromInline
    static func encode(continues: Bool, error: String?, to out: inout [UInt8],
                       writeParameters: (inout [UInt8]) -> Void) {
        // Written by hand, in the canonical (sorted) key order, so the hot path builds no
        // envelope dictionary. An empty buffer (a connection's first reply of a read) gets
        // room for a typical reply at once instead of growing through five reallocations.
        if out.isEmpty { out.reserveCapacity(512) }
        out.append(UInt8(ascii: "{"))
        if continues { out.append(utf8: #""continues":true,"#) }
        if let error {
            out.append(utf8: #""error":"#)
            JSONValue.writeString(error, to: &out)
            out.append(UInt8(ascii: ","))
        }
        out.append(utf8: #""parameters":"#)
        writeParameters(&out)
        out.append(utf8: "}\0")
    }

    /// The reply as one NUL-terminated message.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        encode(to: &out)
        return out
    }
}

/// A continuing reply (`continues: true`) encoded once, for sending the same reply on many
/// calls (`VarlinkReplyHandle.send(_:)`): a push to many subscribers.
public struct VarlinkEncodedReply: Sendable {
    /// The NUL-terminated message.
    let bytes: [UInt8]

    public init(continuing parameters: [String: JSONValue]) {
        bytes = VarlinkReply(parameters: parameters, continues: true).encoded()
    }
}
