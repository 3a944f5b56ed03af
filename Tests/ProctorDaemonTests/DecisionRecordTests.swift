@testable import ProctorDaemon
import ProctorPolicy
import Testing

/// A decision's record renders its log line on the log writer's thread: the message and
/// the fields in the order the journal has always had them.
@Suite struct DecisionRecordTests {
    private let closing = [("SESSION", "s-1"), ("PEER_PID", "42"), ("PEER_UID", "1000"), ("PEER_EXE", "/usr/bin/notes")]

    @Test func aDenialsLineHasItsVerdictReasonAndFieldsInOrder() {
        let record = DecisionRecord(app: "com.example.notes", action: Action.print.rawValue, target: "/tmp/a b.pdf",
                                    allowed: false, rule: #"apps["com.example.notes"].dlp.print"#,
                                    reason: "printing is blocked", policyVersion: "2026.1", closingFields: closing)
        let (message, fields) = record.logContent()
        #expect(message == "Denied print for com.example.notes: printing is blocked")
        #expect(fields.map(\.0) == ["APP_ID", "ACTION", "DECISION", "RULE", "POLICY_VERSION", "TARGET",
                                    "SESSION", "PEER_PID", "PEER_UID", "PEER_EXE"])
        #expect(fields.map(\.1) == ["com.example.notes", "print", "denied", #"apps["com.example.notes"].dlp.print"#, "2026.1",
                                    "/tmp/a b.pdf", "s-1", "42", "1000", "/usr/bin/notes"])
    }

    @Test func anAllowedDecisionWithoutTargetHasNoTargetField() {
        let record = DecisionRecord(app: "com.example.notes", action: Action.clipboardCopy.rawValue, target: nil,
                                    allowed: true, rule: "builtin.clipboard", reason: "allowed", policyVersion: "7",
                                    closingFields: closing)
        let (message, fields) = record.logContent()
        #expect(message == "Allowed clipboard.copy for com.example.notes: allowed")
        #expect(fields.map(\.0) == ["APP_ID", "ACTION", "DECISION", "RULE", "POLICY_VERSION",
                                    "SESSION", "PEER_PID", "PEER_UID", "PEER_EXE"])
        #expect(fields.map(\.1) == ["com.example.notes", "clipboard.copy", "allowed", "builtin.clipboard", "7",
                                    "s-1", "42", "1000", "/usr/bin/notes"])
    }

    /// A target is kept in the record's allocation up to 64 bytes, as a `String` past them; read
    /// back the same either way, an empty one too (which is not a missing one).
    @Test(arguments: ["", "é", String(repeating: "a", count: 63), String(repeating: "a", count: 64),
                      String(repeating: "a", count: 65), String(repeating: "€", count: 21) + "ab", "/home/ü/€ 𝄞.txt"])
    func aTargetReadsBackAsItWasGiven(_ target: String) {
        let record = DecisionRecord(app: "a", action: "print", target: target, allowed: false, rule: "r", reason: "no")
        #expect(record.target == target)
        #expect(record.logContent().fields.contains { $0 == ("TARGET", target) })
    }

    /// The engine's decision is recorded without the asking app's id and named with the
    /// record's app when read: the line and the event say what the whole `Decision` says.
    @Test(arguments: ["com.example.notes", "notes", "say \"hi\""])
    func anEngineDecisionIsNamedWithTheRecordsApp(app: String) {
        let engine = CompiledPolicy(Policy(version: "1", apps: [app: AppPolicy(settings: AppSettings(dlp: DLPSettings(print: .block)))]))
        let request = DecisionRequest(app: app, action: .print)
        let whole = engine.decide(request)
        let record = DecisionRecord(.engine(engine.engineDecision(for: request)), app: app, action: "print", target: nil,
                                    policyVersion: "1", closingFields: closing)
        let given = DecisionRecord(.given(whole), app: app, action: "print", target: nil, policyVersion: "1", closingFields: closing)
        #expect(record.rule == whole.rule && record.rule.hasSuffix(".dlp.print") && record.reason == whole.reason)
        #expect(!record.allowed && record.serialized() == given.serialized())
        #expect(record.logContent().message == given.logContent().message)
        #expect(record.logContent().fields.map(\.1) == given.logContent().fields.map(\.1))
    }
}
