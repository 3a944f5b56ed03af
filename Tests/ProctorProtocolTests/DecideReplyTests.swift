import JSONCore
import ProctorPolicy
import ProctorProtocol
import Testing
import Varlink

/// `Agent.Decide.DirectReply`, the direct way's reply, writes the bytes the general way
/// serializes from `Agent.Decide.Reply` for the same decision.
@Suite struct DecideReplyTests {
    @Test func theDirectReplyIsWrittenAsTheReplysFieldsAreSerialized() {
        let engine = CompiledPolicy(Policy(version: "1", defaults: AppSettings(dlp: DLPSettings(fileExportDeny: ["/tmp/**"])),
                                           apps: ["com.example.notes": AppPolicy(settings: AppSettings(dlp: DLPSettings(print: .block)))]))
        let decisions = [
            Decision(allowed: true, rule: "dlp.print", reason: "allowed by policy"),
            Decision(allowed: false, rule: "dlp.fileExport.deny[\"/tmp/**\"]", reason: "denied: \u{1}\t\n \\ ü € 𝄞", violation: .block),
            Decision(allowed: false, rule: "", reason: ""),
        ] + [Action.print, .fileExport, .launch, .screenCapture].map {
            engine.decide(DecisionRequest(app: "com.example.notes", action: $0, target: "/tmp/x"))
        }
        for decision in decisions {
            var written: [UInt8] = []
            Agent.Decide.DirectReply(decision).writeParameters(to: &written)
            #expect(written == JSONValue.object(Agent.Decide.Reply(decision).fields).serialized())
            var message: [UInt8] = []
            Agent.Decide.DirectReply(decision).writeReply(to: &message)
            #expect(message == VarlinkReply(parameters: Agent.Decide.Reply(decision).fields).encoded())
        }
    }
}
