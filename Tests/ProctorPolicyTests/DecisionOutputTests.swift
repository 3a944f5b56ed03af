import JSONCore
import ProctorPolicy
import Testing

@Suite struct DecisionOutputTests {
    @Test func jsonCarriesViolationOnlyWhenSet() {
        let plain = Decision(allowed: false, rule: "builtin.unknownApp", reason: "Nope.")
        #expect(plain.json == ["allowed": false, "rule": "builtin.unknownApp", "reason": "Nope."])
        let warned = Decision(allowed: true, rule: "apps.x.compliance.minVersion", reason: "Old.", violation: .warn)
        #expect(warned.json == ["allowed": true, "rule": "apps.x.compliance.minVersion", "reason": "Old.", "violation": "warn"])
    }

    @Test func effectiveRulesResolveEveryLayer() throws {
        let asker = "com.example.notes"
        let defaults = AppSettings(dlp: DLPSettings(clipboardCharLimit: 40, shareExempt: ["com.partner.*"], fileExportDeny: ["/tmp/**"]),
                                   compliance: ComplianceSettings(offlineGraceSeconds: 3600))
        let app = AppPolicy(settings: AppSettings(
            dlp: DLPSettings(clipboardLevel: .managedPasteIn, print: .block, fileExportAllow: ["/home/*/Work/**"],
                             fileExportEnforcement: .kernel),
            compliance: ComplianceSettings(minVersion: SemanticVersion("2.3.0"), onViolation: .warn)))
        let engine = CompiledPolicy(EngineFixtures.policy(defaults: defaults, [asker: app]))
        let expected: JSONValue = [
            "dlp": [
                "clipboard": ["level": "managed-paste-in", "charLimit": 40],
                "share": ["send": "managed", "receive": "managed", "exempt": ["com.partner.*"]],
                "print": "block",
                "screenCapture": "allow",
                "fileExport": ["allow": ["/home/*/Work/**"], "deny": ["/tmp/**"], "enforcement": "kernel"],
                "notifications": "allow",
            ],
            "compliance": ["minVersion": "2.3.0", "onViolation": "warn", "offlineGraceSeconds": 3600],
        ]
        #expect(engine.effectiveRules(for: asker) == expected)

        // Without allow list or minimum those keys are absent, not empty; enforcement is advisory.
        let plain = try #require(engine.effectiveRules(for: EngineFixtures.managedTarget))
        #expect(plain["dlp"]?["fileExport"] == ["deny": ["/tmp/**"], "enforcement": "advisory"])
        #expect(plain["compliance"] == ["onViolation": "block", "offlineGraceSeconds": 3600])
    }

    /// The engine keeps a rule as layer, setting and the asking app's id and renders it when
    /// read: the text must be what `JSONPath` makes of the app entry, whatever the id.
    @Test(arguments: ["com.example.notes", "notes", "_x9", "9lives", "com.ex-ample.app", "com.exämple.app",
                      "say \"hi\"", "back\\slash", "tab\there", ""])
    func rulesNameTheAppEntryAsJSONPathRendersIt(id: String) {
        let app = AppPolicy(settings: AppSettings(dlp: DLPSettings(print: .block, fileExportDeny: ["/a/**", "/tmp/**"])))
        let engine = CompiledPolicy(Policy(version: "1", defaults: AppSettings(dlp: DLPSettings(shareExempt: ["*"])),
                                           apps: [id: app, "blocked." + id: AppPolicy(state: .blocked)]))
        let path = JSONPath([.key("apps"), .key(id)]).description
        let print = engine.decide(DecisionRequest(app: id, action: .print))
        #expect(print.rule == path + ".dlp.print")
        #expect(print == Decision(allowed: false, rule: path + ".dlp.print", reason: print.reason))
        #expect(print.hashValue == Decision(allowed: false, rule: path + ".dlp.print", reason: print.reason).hashValue)
        #expect(engine.decide(DecisionRequest(app: id, action: .fileExport, target: "/tmp/x")).rule == path + ".dlp.fileExport.deny[1]")
        #expect(engine.decide(DecisionRequest(app: id, action: .shareSend, target: "other")).rule == "defaults.dlp.share.exempt[0]")
        #expect(engine.decide(DecisionRequest(app: id, action: .screenCapture)).rule == "builtin.screenCapture")
        let blocked = JSONPath([.key("apps"), .key("blocked." + id)]).description
        #expect(engine.decide(DecisionRequest(app: "blocked." + id, action: .launch)).rule == blocked + ".state")
    }

    /// `appendRule(to:askingApp:)` and `ruleByteCount(askingApp:)` give the bytes of the rule
    /// without building it, and `writeAnswer(to:askingApp:)` the decision's JSON, for every kind
    /// of rule: app entry (of every id shape), defaults, built-in, list entries with one and
    /// with several digits.
    @Test(arguments: ["com.example.notes", "notes", "com.exämple.app", "say \"hi\"", "tab\there", ""])
    func ruleBytesAreTheRulesUTF8(id: String) {
        let deny = (0..<12).map { "/deny\($0)/**" }
        let app = AppPolicy(settings: AppSettings(dlp: DLPSettings(print: .block, fileExportDeny: deny)))
        let engine = CompiledPolicy(Policy(version: "1", defaults: AppSettings(dlp: DLPSettings(shareExempt: ["a", "*"])),
                                           apps: [id: app]))
        let requests = [
            DecisionRequest(app: id, action: .print), DecisionRequest(app: id, action: .fileExport, target: "/deny3/x"),
            DecisionRequest(app: id, action: .fileExport, target: "/deny11/x"), DecisionRequest(app: id, action: .launch),
            DecisionRequest(app: id, action: .shareSend, target: "other"), DecisionRequest(app: id, action: .screenCapture),
            DecisionRequest(app: "unknown." + id, action: .print),
        ]
        #expect(engine.decide(requests[2]).rule.hasSuffix(".dlp.fileExport.deny[11]"))
        for request in requests {
            let decision = engine.engineDecision(for: request), whole = engine.decide(request)
            var bytes: [UInt8] = [1, 2]
            decision.appendRule(to: &bytes, askingApp: request.app)
            #expect(bytes == [1, 2] + Array(whole.rule.utf8))
            #expect(decision.ruleByteCount(askingApp: request.app) == whole.rule.utf8.count)
            var answer: [UInt8] = []
            decision.writeAnswer(to: &answer, askingApp: request.app)
            #expect(answer == JSONValue.object(["allowed": .bool(whole.allowed), "rule": .string(whole.rule),
                                                "reason": .string(whole.reason)]).serialized())
        }
    }

    @Test func aRuleSetOnADecisionReplacesTheEnginesRule() {
        let engine = CompiledPolicy(Policy(version: "1", apps: ["com.example.notes": AppPolicy()]))
        var decision = engine.decide(DecisionRequest(app: "com.example.notes", action: .print))
        #expect(decision.rule == "builtin.print")
        decision.rule = "sdk.offlineGrace"
        decision.reason = "Set by \"the SDK\"."
        #expect(decision.rule == "sdk.offlineGrace" && decision.json["rule"] == "sdk.offlineGrace")
        #expect(decision.reason == "Set by \"the SDK\"." && decision.json["reason"] == "Set by \"the SDK\".")
    }
}
