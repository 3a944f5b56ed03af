import JSONCore
import ProctorPolicy

/// The `data` of a `decision` event, kept as its typed values rather than a dictionary: a
/// denied `Decide` makes one on the event loop for every call, and the history writes it as
/// JSON a moment later, so building a `[String: JSONValue]` (five keys hashed) and sorting
/// it to serialize cost more than the decision. `members` is that dictionary, for the
/// readers that want it (an `Events` stream, `EventHistory` of events still queued).
struct DecisionEventData: Equatable {
    /// Shared with the decision's log line (`DecisionRecord`).
    let record: DecisionRecord

    var action: String { record.action }
    var target: String? { record.target }
    var allowed: Bool { record.decision.allowed }
    /// Rendered when the event is written or streamed (not on each denial).
    var rule: String { record.decision.rule }
    var reason: String { record.decision.reason }

    init(_ record: DecisionRecord) { self.record = record }

    init(action: String, target: String?, allowed: Bool, rule: String, reason: String) {
        self.init(DecisionRecord(Decision(allowed: allowed, rule: rule, reason: reason), app: "", action: action,
                                 target: target, policyVersion: "", closingFields: []))
    }

    /// The same event data: the fields an event has, not the record's line-only ones.
    static func == (left: Self, right: Self) -> Bool {
        left.action == right.action && left.target == right.target && left.record.decision == right.record.decision
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
