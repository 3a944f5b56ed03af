public import JSONCore

/// Why bytes received on a Varlink connection are not a valid message. Every case but
/// `invalidField`/`missingMethod` leaves the stream unusable: the connection must be closed.
public enum VarlinkFrameError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No NUL terminator within the first `limit` bytes of a message.
    case messageTooLarge(limit: Int)
    /// The message is not valid UTF-8.
    case invalidUTF8
    /// The message is UTF-8 but not JSON.
    case invalidJSON(JSONParseError)
    /// The message is JSON but not an object; `found` names what it is ("an array", …).
    case notAnObject(found: String)
    /// A call without a `method` member.
    case missingMethod
    /// A protocol member (`method`, `parameters`, `more`, …) of the wrong JSON type.
    case invalidField(name: String, expected: String, found: String)
    /// A message that repeats a key (exactly, or in another Unicode form) inside the parameter
    /// `parameter`, or repeats the protocol member `parameter`: no dictionary holds both.
    case duplicateMember(parameter: String, JSONParseError)

    public var description: String {
        switch self {
        case .messageTooLarge(let limit): "message larger than \(limit) bytes"
        case .invalidUTF8: "message is not valid UTF-8"
        case .invalidJSON(let error): "message is not valid JSON: \(error)"
        case .notAnObject(let found): "message is \(found), expected a JSON object"
        case .missingMethod: "call has no \"method\""
        case .invalidField(let name, let expected, let found): "\"\(name)\" is \(found), expected \(expected)"
        case .duplicateMember(let parameter, let error): "\"\(parameter)\" repeats a key: \(error)"
        }
    }
}
