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
        // One app's kept replies (a session's), each decision written twice: rendered, then copied.
        let kept = UnsafeMutablePointer<DecisionAnswers>.allocate(capacity: 1)
        kept.initialize(to: Agent.Decide.DirectReply.answers())
        defer { kept.deinitialize(count: 1).deallocate() }
        for decision in decisions + decisions {
            var written: [UInt8] = []
            Agent.Decide.DirectReply(decision).writeParameters(to: &written)
            #expect(written == JSONValue.object(Agent.Decide.Reply(decision).fields).serialized())
            var message: [UInt8] = []
            Agent.Decide.DirectReply(decision).writeReply(to: &message)
            #expect(message == VarlinkReply(parameters: Agent.Decide.Reply(decision).fields).encoded())
            var keptMessage: [UInt8] = []
            Agent.Decide.DirectReply(decision, keptIn: kept).writeReply(to: &keptMessage)
            #expect(keptMessage == message)
        }
    }
}
