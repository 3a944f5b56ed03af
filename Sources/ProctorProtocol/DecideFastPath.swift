public import JSONCore
import ProctorPolicy

/// `Decide` straight from and to bytes (`VarlinkDirectMethod`): proctord's hot call, where
/// reading its parameters into `[String: JSONValue]` and the request from that, and writing
/// the reply through a dictionary, cost more than the decision itself.
extension Agent.Decide.Request {
    /// Reads the parameters object of a plain `Decide` call, or returns nil for anything the
    /// general path must answer: a member that is not one of the four or comes twice (the
    /// parser refuses the second), a null, a value of another type, an action that is not
    /// one, a size that is not an integer the interface's `int` accepts. What it accepts, it
    /// reads to the same values as `init(_:)` does from the parsed object.
    public static func read(from reader: inout JSONPullReader) throws(JSONParseError) -> Self? {
        guard try reader.peek() == .object else { return nil }
        try reader.beginObject()
        var session: String?
        var action: Action?
        var target: String?
        var size: Int?
        var hasTarget = false, hasSize = false
        // Keys and actions are compared as bytes: no `String` is made for them.
        while let key = try reader.nextKey(among: keys) {
            switch key {
            case 0:
                guard session == nil, try reader.peek() == .string else { return nil }
                session = try reader.string()
            case 1:
                guard action == nil, try reader.peek() == .string else { return nil }
                let named = try reader.string(among: actionNames)
                guard named < actionNames.count else { return nil }
                action = actions[named]
            case 2:
                guard !hasTarget, try reader.peek() == .string else { return nil }
                (target, hasTarget) = (try reader.string(), true)
            case 3:
                // `JSONValue.intValue` is what the interface's `int` and the request's reader take.
                guard !hasSize, try reader.peek() == .number,
                      let integer = JSONValue.number(try reader.number()).intValue else { return nil }
                (size, hasSize) = (integer, true)
            default:
                return nil
            }
        }
        guard let session, let action else { return nil }
        return Self(session: session, action: action, target: target, size: size)
    }

    /// The members `read(from:)` takes, by the index `JSONPullReader.nextKey(among:)` gives.
    private static let keys = ["session", "action", "target", "size"].map { Array($0.utf8) }
    /// Every action, and its raw value at the same index.
    private static let actions = Array(Action.allCases)
    private static let actionNames = actions.map { Array($0.rawValue.utf8) }
}
