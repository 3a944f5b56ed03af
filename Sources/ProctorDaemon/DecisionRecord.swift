import JSONCore
import ProctorPolicy
import SystemdKit

/// A decision as the event loop records it, for its log line and its `decision` event: a
/// plain value, which a denial's event carries in the history queue (`EventFeed.Pending`),
/// and which the log writer's thread and the history write turn into text later, in batches
/// (`logContent()`, `serialized()`); `Events` subscribers read `members`. A denied `Decide`
/// makes one on the loop for every call: no object (an allocated and pooled record cost
/// the call more than the values it holds), only the typed values, their text made by
/// whoever reads them.
struct DecisionRecord: Sendable {
    /// A decision's target as the record keeps it: its bytes inline when they fit (an app id,
    /// most paths; a `String` of them was an allocation per denial), else a `String`.
    /// `string` makes the `String` when the line or event is made.
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

    /// What was decided: the engine's decision for `app`, its rule rendered only when read (not
    /// on each denial), or a decision given whole (a registration's launch verdict). The
    /// violation is not read: neither the line nor the event carries it.
    enum Outcome: Sendable {
        case engine(EngineDecision)
        case given(Decision)

        var allowed: Bool {
            switch self {
            case .engine(let decision): decision.allowed
            case .given(let decision): decision.allowed
            }
        }
    }

    let app: AppID
    let action: String
    private let recordedTarget: Target?
    private let outcome: Outcome
    /// The log line's `POLICY_VERSION`: the active policy's when the decision was made.
    let policyVersion: String
    /// The fields that end the log line (`AgentSession.decisionLogFields`); empty when the
    /// decision is not logged.
    let closingFields: [(String, String)]
    /// Whether the decision's line is logged: a denial's is made from its record in the history
    /// queue (`Daemon.logQueuedDenial`), which holds those that are not too.
    let isLogged: Bool

    var target: String? { recordedTarget?.string }
    var allowed: Bool { outcome.allowed }

    var rule: String {
        switch outcome {
        case .engine(let decision): decision.rule(askingApp: app)
        case .given(let decision): decision.rule
        }
    }

    var reason: String {
        switch outcome {
        case .engine(let decision): decision.reasonText
        case .given(let decision): decision.reason
        }
    }

    init(_ outcome: Outcome, app: AppID, action: String, target: Target?, policyVersion: String,
         closingFields: [(String, String)], logged: Bool = true) {
        self.outcome = outcome
        self.app = app
        self.action = action
        recordedTarget = target
        self.policyVersion = policyVersion
        self.closingFields = closingFields
        isLogged = logged
    }

    init(app: AppID, action: String, target: String?, allowed: Bool, rule: String, reason: String,
         policyVersion: String = "", closingFields: [(String, String)] = []) {
        self.init(.given(Decision(allowed: allowed, rule: rule, reason: reason)), app: app, action: action,
                  target: target.map(Target.init), policyVersion: policyVersion, closingFields: closingFields)
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

/// The log lines of decisions (`DecisionRecord.logContent()`), made on the log writer's thread:
/// the loop hands the logger one of these for all the denials since its last hand-off
/// (`Daemon.moveQueuedDenialsToLogBatch`), so that a denial adds no log entry of its own.
final class DecisionLines: DeferredLogContent {
    let records: [DecisionRecord]

    init(_ records: [DecisionRecord]) { self.records = records }

    var eventCount: Int { records.count }

    func logContent(_ index: Int) -> (message: String, fields: [(String, String)]) { records[index].logContent() }
}
