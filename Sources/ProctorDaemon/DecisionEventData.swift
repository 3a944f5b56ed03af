import JSONCore
import ProctorPolicy

/// The `data` of a `decision` event, kept as its typed values rather than a dictionary: a
/// denied `Decide` makes one on the event loop for every call, and the history writes it as
/// JSON a moment later, so building a `[String: JSONValue]` (five keys hashed) and sorting
/// it to serialize cost more than the decision. `members` is that dictionary, for the
/// readers that want it (an `Events` stream, `EventHistory` of events still queued).
struct DecisionEventData: Equatable {
    let action: String
    let target: String?
    /// The decision as the engine made it, its rule rendered only when the event is written
    /// or streamed (not on each denial). Its violation is dropped: an event does not carry it.
    private let decision: Decision

    var allowed: Bool { decision.allowed }
    var rule: String { decision.rule }
    var reason: String { decision.reason }

    init(action: String, target: String?, decision: Decision) {
        self.action = action
        self.target = target
        var decision = decision
        decision.violation = nil
        self.decision = decision
    }

    init(action: String, target: String?, allowed: Bool, rule: String, reason: String) {
        self.init(action: action, target: target, decision: Decision(allowed: allowed, rule: rule, reason: reason))
    }

    var members: [String: JSONValue] {
        ["action": .string(action), "target": target.map(JSONValue.string) ?? .null, "allowed": .bool(allowed),
         "rule": .string(rule), "reason": .string(reason)]
    }

    /// The bytes `JSONValue.object(members).serialized()` gives: members sorted by their
    /// UTF-8 bytes (action, allowed, reason, rule, target), no white space.
    func serialized() -> [UInt8] {
        var out: [UInt8] = []
        let rule = rule, reason = reason
        out.reserveCapacity(64 + action.utf8.count + (target?.utf8.count ?? 0) + rule.utf8.count + reason.utf8.count)
        out.append(contentsOf: #"{"action":"#.utf8)
        JSONValue.writeString(action, to: &out)
        out.append(contentsOf: (allowed ? #","allowed":true,"reason":"# : #","allowed":false,"reason":"#).utf8)
        JSONValue.writeString(reason, to: &out)
        out.append(contentsOf: #","rule":"#.utf8)
        JSONValue.writeString(rule, to: &out)
        out.append(contentsOf: #","target":"#.utf8)
        if let target { JSONValue.writeString(target, to: &out) } else { out.append(contentsOf: "null".utf8) }
        out.append(UInt8(ascii: "}"))
        return out
    }
}
