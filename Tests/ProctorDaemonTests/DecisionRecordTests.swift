import JSONCore
import ProctorPolicy
@testable import ProctorDaemon
import Testing

/// One `DecisionRecord` makes both a decision's log line and its event: they must say what
/// each said when it was made apart (the line's fields in their order, the event's data).
@Suite struct DecisionRecordTests {
    private static let closing = [("SESSION", "0123abcd"), ("PEER_PID", "42")]

    @Test func aDenialsLineHasItsMessageAndFieldsInOrder() {
        let decision = Decision(allowed: false, rule: "apps[\"com.example.notes\"].dlp.print", reason: "printing is off",
                                violation: .block)
        let record = DecisionRecord(decision, app: "com.example.notes", action: Action.print.rawValue,
                                    target: "/tmp/ü.pdf", policyVersion: "7", closingFields: Self.closing)
        let line = record.line
        #expect(line.message == "Denied print for com.example.notes: printing is off")
        #expect(line.fields.map(\.0) == ["APP_ID", "ACTION", "DECISION", "RULE", "POLICY_VERSION", "TARGET",
                                         "SESSION", "PEER_PID"])
        #expect(line.fields.map(\.1) == ["com.example.notes", "print", "denied", "apps[\"com.example.notes\"].dlp.print",
                                         "7", "/tmp/ü.pdf", "0123abcd", "42"])
        // The event's data, its violation dropped.
        let data = DecisionEventData(record)
        #expect(data.members == ["action": "print", "target": "/tmp/ü.pdf", "allowed": false,
                                 "rule": "apps[\"com.example.notes\"].dlp.print", "reason": "printing is off"])
        #expect(data.serialized() == JSONValue.object(data.members).serialized())
        #expect(record.decision.violation == nil)
    }

    @Test func anAllowedDecisionWithoutTargetHasNoTargetField() {
        let record = DecisionRecord(Decision(allowed: true, rule: "builtin.default", reason: "allowed"),
                                    app: "a", action: Action.clipboardCopy.rawValue, target: nil,
                                    policyVersion: "1", closingFields: [])
        #expect(record.line.message == "Allowed clipboard.copy for a: allowed")
        #expect(record.line.fields.map(\.0) == ["APP_ID", "ACTION", "DECISION", "RULE", "POLICY_VERSION"])
        #expect(record.line.fields[2].1 == "allowed")
        #expect(DecisionEventData(record).members["target"] == .null)
    }
}
