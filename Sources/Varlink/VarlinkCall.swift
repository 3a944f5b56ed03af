public import JSONCore
public import LinuxIO

/// A Varlink method call: the JSON object a client sends, terminated by a NUL byte.
public struct VarlinkCall: Sendable, Hashable {
    /// The fully qualified method name, `interface.Method` (for example `org.varlink.service.GetInfo`).
    public var method: String
    public var parameters: [String: JSONValue]
    /// The client wants no reply at all.
    public var oneway: Bool
    /// The client accepts several replies, all but the last with `continues: true`.
    public var more: Bool
    /// The client asks to leave Varlink and speak another protocol on the connection after the reply.
    public var upgrade: Bool
    /// Who sent this message, as the kernel stamped each of its bytes — set by a
    /// `VarlinkServer` made with `receivesSenderCredentials`, nil otherwise.
    ///
    /// With sender credentials on, nil means the sender is unknown or *ambiguous*: the
    /// message's bytes were written by more than one process (a connection shared after a
    /// fork). Refuse identity-sensitive calls then. This names the process that sent the
    /// call, which may differ from the one that connected (the connection's
    /// `PeerCredentials`): a process can connect, then fork and exec, and let another
    /// process send. Its `process` pidfd (kernel 6.5+) lets the handler read `/proc/PID/…`
    /// and then confirm with `ProcessHandle.isAlive` that the pid still names that process.
    public var sender: SenderCredentials?

    public init(method: String, parameters: [String: JSONValue] = [:], oneway: Bool = false, more: Bool = false,
                upgrade: Bool = false) {
        self.method = method
        self.parameters = parameters
        self.oneway = oneway
        self.more = more
        self.upgrade = upgrade
    }

    /// The interface part of `method` (everything before the last dot), or `nil` when there is no dot.
    public var interfaceName: String? {
        guard let dot = method.utf8.lastIndex(of: UInt8(ascii: ".")) else { return nil }
        return String(method[..<dot])
    }

    /// The method part of `method` (after the last dot).
    public var memberName: Substring {
        guard let dot = method.utf8.lastIndex(of: UInt8(ascii: ".")) else { return method[...] }
        return method[method.utf8.index(after: dot)...]
    }

    /// Decodes a call from a parsed message object; each way it can be wrong is a distinct error.
    public init(message: [String: JSONValue]) throws(VarlinkFrameError) {
        guard let methodValue = message["method"] else { throw .missingMethod }
        guard case .string(let method) = methodValue else {
            throw .invalidField(name: "method", expected: "a string", found: methodValue.typeDescription)
        }
        var parameters: [String: JSONValue] = [:]
        let parametersValue = message["parameters"]
        switch parametersValue {
        case nil, .null?: break
        case .object(let members)?: parameters = members
        case let other?: throw .invalidField(name: "parameters", expected: "an object", found: other.typeDescription)
        }
        // Most calls are `method` and `parameters` alone: then no flag is there to look up
        // (three hashed lookups a call otherwise).
        let hasOtherMembers = message.count > (parametersValue == nil ? 1 : 2)
        self.init(method: method, parameters: parameters,
                  oneway: hasOtherMembers ? try Self.flag("oneway", in: message) : false,
                  more: hasOtherMembers ? try Self.flag("more", in: message) : false,
                  upgrade: hasOtherMembers ? try Self.flag("upgrade", in: message) : false)
    }

    static func flag(_ name: String, in message: [String: JSONValue]) throws(VarlinkFrameError) -> Bool {
        switch message[name] {
        case nil, .null?: return false
        case .bool(let value)?: return value
        case let other?: throw .invalidField(name: name, expected: "a boolean", found: other.typeDescription)
        }
    }

    /// Appends the call as a NUL-terminated message; flags that are false are left out.
    public func encode(to out: inout [UInt8]) {
        var message: [String: JSONValue] = ["method": .string(method)]
        if !parameters.isEmpty { message["parameters"] = .object(parameters) }
        if oneway { message["oneway"] = true }
        if more { message["more"] = true }
        if upgrade { message["upgrade"] = true }
        JSONValue.object(message).write(to: &out)
        out.append(0)
    }

    /// The call as one NUL-terminated message.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        encode(to: &out)
        return out
    }
}
