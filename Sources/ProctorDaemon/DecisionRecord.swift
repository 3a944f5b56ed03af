import JSONCore
import ProctorPolicy
import SystemdKit

/// A decision as the event loop records it, for its log line and its `decision` event: one
/// allocation, shared by the log queue (the writer thread makes the line, `logContent()`),
/// the history queue (written as JSON a moment later, `serialized()`) and `Events`
/// subscribers (`members`). A denied `Decide` makes one on the loop for every call, so the
/// loop keeps only the typed values, and whoever reads them makes the text.
final class DecisionRecord: DeferredLogContent {
    /// A decision's target as the record keeps it: its bytes within the record's own allocation
    /// when they fit (an app id, most paths; a `String` of them was a second allocation per
    /// denial), else a `String`. `string` makes the `String` when the line or event is made.
    struct Target: Sendable {
        private let bytes: InlineArray<64, UInt8>
        /// The bytes of `bytes` in use; -1 when the target is `long`.
        private let count: Int
        private let long: String?

        /// `target`: valid UTF-8.
        init(_ target: UnsafeBufferPointer<UInt8>) {
            var bytes = InlineArray<64, UInt8>(repeating: 0)
            if target.count <= bytes.count {
                withUnsafeMutableBytes(of: &bytes) { $0.copyMemory(from: UnsafeRawBufferPointer(target)) }
                (count, long) = (target.count, nil)
            } else {
                (count, long) = (-1, String(decoding: target, as: UTF8.self))
            }
            self.bytes = bytes
        }

        init(_ target: String) {
            var target = target
            self = target.withUTF8(Target.init)
        }

        var string: String {
            guard count >= 0 else { return long! }
            return withUnsafeBytes(of: bytes) { String(decoding: $0.prefix(count), as: UTF8.self) }
        }
    }

    let app: AppID
    let action: String
    private let recordedTarget: Target?
    /// The decision as the engine made it, its rule rendered only when read (not on each
    /// denial). Its violation is dropped: neither the line nor the event carries it.
    private let decision: Decision
    /// The log line's `POLICY_VERSION`: the active policy's when the decision was made.
    let policyVersion: String
    /// The fields that end the log line (`AgentSession.decisionLogFields`); empty when the
    /// decision is not logged.
    let closingFields: [(String, String)]
    /// Whether the decision's line is logged: a denial's is made from its record in the history
    /// queue (`Daemon.logQueuedDenial`), which holds those that are not too.
    let isLogged: Bool

    var target: String? { recordedTarget?.string }
    var allowed: Bool { decision.allowed }
    var rule: String { decision.rule }
    var reason: String { decision.reason }

    init(_ decision: Decision, app: AppID, action: String, target: Target?, policyVersion: String,
         closingFields: [(String, String)], logged: Bool = true) {
        var decision = decision
        decision.violation = nil
        self.decision = decision
        self.app = app
        self.action = action
        self.recordedTarget = target
        self.policyVersion = policyVersion
        self.closingFields = closingFields
        self.isLogged = logged
    }

    convenience init(app: AppID, action: String, target: String?, allowed: Bool, rule: String, reason: String,
                     policyVersion: String = "", closingFields: [(String, String)] = []) {
        self.init(Decision(allowed: allowed, rule: rule, reason: reason), app: app, action: action, target: target.map(Target.init),
                  policyVersion: policyVersion, closingFields: closingFields)
    }

    // MARK: The log line

    /// The line's message and fields, made on the log writer's thread.
    func logContent() -> (message: String, fields: [(String, String)]) {
        // One allocation, element by element: appending array literals copied each twice.
        var fields: [(String, String)] = []
        let target = target
        fields.reserveCapacity(6 + closingFields.count)
        fields.append((DaemonEventField.appID, app))
        fields.append((DaemonEventField.action, action))
        fields.append((DaemonEventField.decision, allowed ? "allowed" : "denied"))
        fields.append((DaemonEventField.rule, rule))
        fields.append((DaemonEventField.policyVersion, policyVersion))
        if let target { fields.append((DaemonEventField.target, target)) }
        for field in closingFields { fields.append(field) }
        return (message, fields)
    }

    /// `Denied print for com.example.notes: <reason>`, made with one allocation: interpolated,
    /// the string grew piece by piece (≈ 3 500 instructions a denial, the line's largest part).
    private var message: String {
        let verdict: StaticString = allowed ? "Allowed " : "Denied "
        let forApp: StaticString = " for ", colon: StaticString = ": "
        let reason = reason
        let count = verdict.utf8CodeUnitCount + action.utf8.count + forApp.utf8CodeUnitCount + app.utf8.count
            + colon.utf8CodeUnitCount + reason.utf8.count
        return String(unsafeUninitializedCapacity: count) { buffer in
            var writer = ByteWriter(buffer: UnsafeMutableRawBufferPointer(buffer))
            writer.write(verdict)
            writer.write(action)
            writer.write(forApp)
            writer.write(app)
            writer.write(colon)
            writer.write(reason)
            return writer.count
        }
    }

    // MARK: The event's data

    /// The event's `data`, for the readers that want a dictionary (an `Events` stream,
    /// `EventHistory` of events still queued).
    var members: [String: JSONValue] {
        ["action": .string(action), "target": target.map(JSONValue.string) ?? .null, "allowed": .bool(allowed),
         "rule": .string(rule), "reason": .string(reason)]
    }

    /// The bytes `JSONValue.object(members).serialized()` gives: members sorted by their
    /// UTF-8 bytes (action, allowed, reason, rule, target), no white space. Building the
    /// dictionary (five keys hashed) and sorting it cost more than the decision.
    func serialized() -> [UInt8] {
        var out: [UInt8] = []
        let rule = rule, reason = reason, target = target
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
