import JSONCore
import ProctorPolicy

/// A logged or streamed decision, made once on the event loop for both its log line and its
/// event: the log writer's thread renders the line from it (`line`), the history write or a
/// subscriber's event its `data` (`DecisionEventData`). A class: the log's deferred closure
/// captures it alone, so it is the closure's context (nothing else is allocated), and the
/// event holds it by reference; neither copies its strings or the decision (≈ 500
/// instructions a denial, measured, when each kept its own).
final class DecisionRecord: Sendable {
    let app: AppID
    /// The action's name (`Action.rawValue`).
    let action: String
    /// The target as kept (`Daemon.recordedTarget`).
    let target: String?
    /// Without its violation, which neither the line nor the event carries.
    let decision: Decision
    /// The policy in force when it was made.
    let policyVersion: String
    /// The fields that end the line (the session's and the peer's, `AgentSession.decisionLogFields`).
    let closingFields: [(String, String)]

    init(_ decision: Decision, app: AppID, action: String, target: String?, policyVersion: String,
         closingFields: [(String, String)]) {
        var decision = decision
        decision.violation = nil
        self.decision = decision
        self.app = app
        self.action = action
        self.target = target
        self.policyVersion = policyVersion
        self.closingFields = closingFields
    }

    /// The log message and fields (`DaemonEvent.decisionAllowed`, `.decisionDenied`).
    var line: (message: String, fields: [(String, String)]) {
        // One allocation, element by element: appending array literals copied each twice.
        var fields: [(String, String)] = []
        fields.reserveCapacity(6 + closingFields.count)
        fields.append((DaemonEventField.appID, app))
        fields.append((DaemonEventField.action, action))
        fields.append((DaemonEventField.decision, decision.allowed ? "allowed" : "denied"))
        fields.append((DaemonEventField.rule, decision.rule))
        fields.append((DaemonEventField.policyVersion, policyVersion))
        if let target { fields.append((DaemonEventField.target, target)) }
        for field in closingFields { fields.append(field) }
        return (message, fields)
    }

    /// `Denied print for com.example.notes: <reason>`, made with one allocation: interpolated,
    /// the string grew piece by piece (≈ 3 500 instructions a denial, the line's largest part).
    private var message: String {
        let verdict: StaticString = decision.allowed ? "Allowed " : "Denied "
        let forApp: StaticString = " for ", colon: StaticString = ": "
        let reason = decision.reason
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
}
