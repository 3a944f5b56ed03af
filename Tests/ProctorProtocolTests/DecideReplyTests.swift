import JSONCore
import ProctorPolicy
import ProctorProtocol
import Testing
import Varlink

/// `Agent.Decide.DirectReply`, the direct way's reply, writes the bytes the general way
/// serializes from `Agent.Decide.Reply` for the same decision.
@Suite struct DecideReplyTests {
    /// An id written as an identifier, one quoted, one escaped (`apps["say \"hi\""]`).
    @Test(arguments: ["notes", "com.example.notes", "say \"hi\""])
    func theDirectReplyIsWrittenAsTheReplysFieldsAreSerialized(app: String) {
        let engine = CompiledPolicy(Policy(version: "1", defaults: AppSettings(dlp: DLPSettings(fileExportDeny: ["/tmp/**"])),
                                           apps: [app: AppPolicy(settings: AppSettings(dlp: DLPSettings(print: .block)))]))
        let decisions = [Action.print, .fileExport, .launch, .screenCapture].map {
            engine.engineDecision(for: DecisionRequest(app: app, action: $0, target: "/tmp/x"))
        } + [engine.engineDecision(for: DecisionRequest(app: "com.example.unknown", action: .print))]
        // One app's kept replies (a session's), each decision written twice: rendered, then copied.
        let kept = UnsafeMutablePointer<DecisionAnswers>.allocate(capacity: 1)
        kept.initialize(to: Agent.Decide.DirectReply.answers(to: app))
        defer { kept.deinitialize(count: 1).deallocate() }
        for decision in decisions + decisions {
            let reply = Agent.Decide.Reply(Decision(decision, askingApp: app))
            var written: [UInt8] = []
            Agent.Decide.DirectReply(decision, keptIn: kept).writeParameters(to: &written)
            #expect(written == JSONValue.object(reply.fields).serialized())
            var message: [UInt8] = []
            Agent.Decide.DirectReply(decision, keptIn: kept).writeReply(to: &message)
            #expect(message == VarlinkReply(parameters: reply.fields).encoded())
        }
    }
}
