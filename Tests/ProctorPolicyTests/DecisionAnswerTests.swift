import JSONCore
@testable import ProctorPolicy
import Testing

/// `Decision.writeAnswer(to:)` writes what an app's `Decide` is answered without making the
/// rule or the reason a `String`: its bytes must be those of the members serialized, for every
/// sentence and every kind of rule, including those whose text needs escapes.
@Suite struct DecisionAnswerTests {
    private static func serialized(_ decision: Decision) -> [UInt8] {
        JSONValue.object(["allowed": .bool(decision.allowed), "rule": .string(decision.rule),
                          "reason": .string(decision.reason)]).serialized()
    }

    private static func written(_ decision: Decision) -> [UInt8] {
        var bytes: [UInt8] = [7]
        decision.writeAnswer(to: &bytes)
        return Array(bytes.dropFirst())
    }

    /// App ids of every key form: identifiers, quoted (dots, dashes, non-ASCII, DEL), and
    /// escaped (quotes, backslashes, control characters), and the empty id.
    static let appIDs = ["notes", "_x9", "com.example.notes", "9lives", "com.ex-ample.app", "com.exämple.app 𝄞",
                         "del\u{7F}", "say \"hi\"", "back\\slash", "tab\there", "nul\u{0}\u{1F}", ""]

    /// Every kind of rule for the app `id`: app entry and defaults (the setting and list
    /// entries of one to ten digits), built-in, fixed, and a caller's text (with escapes).
    static func rules(for id: String) -> [DecisionRule] {
        let form = DecisionRule.keyForm(of: id)
        var rules: [DecisionRule] = RuleSetting.allCases.flatMap { setting in
            [-1, 0, 7, 12, 1234, Int(Int32.max)].flatMap { entry in
                [DecisionRule.app(id, setting, entry: Int32(entry), form: form), .defaults(setting, entry: Int32(entry))]
            } + [.text(setting.builtinRule), .builtin(setting)]
        }
        rules += FixedRule.allCases.map { .fixed($0) }
        return rules + [.text(""), .text("sdk.offlineGrace ✓"), .text("a \"quoted\" \\ rule\n\t\r\u{1}\u{1F}\u{7F} é 𝄞")]
    }

    /// `appendRule(to:)` renders in the array's spare capacity: after what the array held, the
    /// rule's UTF-8, whatever room the array had (none spare, or plenty).
    @Test(arguments: appIDs)
    func everyRuleIsAppendedAsItsText(id: String) {
        for rule in Self.rules(for: id) {
            let decision = Decision(allowed: false, ruleParts: rule, reason: .exportDenied)
            var tight: [UInt8] = [1, 2]
            var roomy: [UInt8] = [1, 2]
            roomy.reserveCapacity(4096)
            decision.appendRule(to: &tight)
            decision.appendRule(to: &roomy)
            #expect(tight == [1, 2] + Array(decision.rule.utf8) && roomy == tight, "\(decision.rule)")
        }
    }

    /// `appendRule(to:)` makes room for a rendered rule without measuring its suffix and entry.
    @Test func roomForTheLongestSuffixAndEntry() {
        #expect(RuleSetting.allCases.map(\.suffix.utf8CodeUnitCount).max() == DecisionRule.longestSuffix)
        let decision = Decision(allowed: false, ruleParts: .defaults(.offlineGraceSeconds, entry: .max), reason: .exportDenied)
        #expect(decision.ruleByteCount == "defaults".utf8.count + DecisionRule.longestSuffix + DecisionRule.longestEntry)
    }

    /// The fixed rules name `BuiltinDefaults.Rule`'s texts.
    @Test func fixedRulesAreTheBuiltinRuleTexts() {
        typealias Rule = BuiltinDefaults.Rule
        #expect(FixedRule.allCases.map(\.text) == [Rule.unknownApp, Rule.sameApp, Rule.fileExportRelativePath,
                                                   Rule.fileExportPathTooLong, Rule.notificationTarget])
    }

    @Test(arguments: appIDs)
    func everyRuleAndSentenceIsWrittenAsSerialized(id: String) {
        for rule in Self.rules(for: id) {
            for reason in DecisionReason.allCases {
                for allowed in [true, false] {
                    let decision = Decision(allowed: allowed, ruleParts: rule, reason: reason)
                    #expect(Self.written(decision) == Self.serialized(decision), "\(decision.rule) / \(reason)")
                }
            }
        }
    }

    /// A caller's reason and rule are escaped as they are written; setting either replaces the
    /// engine's, in the answer too.
    @Test func callersTextIsEscapedAndReplacesTheEnginesText() {
        let texts = ["", "plain", "quote \" backslash \\ newline \n tab \t cr \r bell \u{7} unit \u{1F} del \u{7F}", "ü € 𝄞"]
        for rule in texts {
            for reason in texts {
                let decision = Decision(allowed: rule.isEmpty, rule: rule, reason: reason, violation: .warn)
                #expect(Self.written(decision) == Self.serialized(decision))
            }
        }
        let engine = CompiledPolicy(Policy(version: "1", apps: ["com.example.notes": AppPolicy()]))
        var decision = engine.decide(DecisionRequest(app: "com.example.notes", action: .print))
        decision.reason = "Set by \"the SDK\"."
        decision.rule = "sdk.offlineGrace"
        #expect(String(decoding: Self.written(decision), as: UTF8.self)
                == #"{"allowed":true,"reason":"Set by \"the SDK\".","rule":"sdk.offlineGrace"}"#)
    }

    /// `DecisionAnswers` writes each answer as `writeAnswer(to:between:and:)` does, whether it
    /// renders it or copies what it kept: for one app (of every key form) every rule kind,
    /// entry and sentence, both outcomes, a caller's text among them, in an order that mixes
    /// them, three times over (far more answers than it keeps, so its bound is crossed).
    @Test(arguments: appIDs)
    func keptAnswersAreTheAnswersWritten(id: String) {
        let form = DecisionRule.keyForm(of: id)
        var decisions: [Decision] = [Decision(allowed: true, rule: "sdk.offlineGrace", reason: "Set by \"the SDK\".")]
        for setting in RuleSetting.allCases {
            for entry in [-1, 0, 7, 1234] {
                for rule in [DecisionRule.app(id, setting, entry: Int32(entry), form: form),
                             .defaults(setting, entry: Int32(entry)), .text(setting.builtinRule), .builtin(setting),
                             .fixed(FixedRule.allCases[entry & 3])] {
                    for reason in DecisionReason.allCases {
                        decisions.append(Decision(allowed: reason.rawValue % 2 == 0, ruleParts: rule, reason: reason))
                    }
                }
            }
        }
        // Every 97th in turn: neighbours differ in rule kind, setting and entry.
        decisions = decisions.indices.sorted { ($0 % 97, $0) < ($1 % 97, $1) }.map { decisions[$0] }
        let repeated = Array(decisions.prefix(40))
        var answers = DecisionAnswers(between: #"{"parameters":"#, and: "}\0")
        for decision in repeated + decisions + repeated + decisions.reversed() + repeated {
            var kept: [UInt8] = [7], written: [UInt8] = [7]
            answers.write(decision, to: &kept)
            decision.writeAnswer(to: &written, between: #"{"parameters":"#, and: "}\0")
            #expect(kept == written, "\(decision.rule) / \(decision.reason)")
        }
    }

    /// Answers are kept by what fixes their bytes: two decisions with the same key write the same.
    @Test func answersDifferingInOutcomeOrRuleHaveDifferentKeys() {
        let decisions = [Decision(allowed: true, ruleParts: .app("a.b", .print, entry: -1, form: .quoted), reason: .printAllowed),
                         Decision(allowed: false, ruleParts: .app("a.b", .print, entry: -1, form: .quoted), reason: .printAllowed),
                         Decision(allowed: true, ruleParts: .defaults(.print, entry: -1), reason: .printAllowed),
                         Decision(allowed: true, ruleParts: .app("a.b", .print, entry: 0, form: .quoted), reason: .printAllowed),
                         Decision(allowed: true, ruleParts: .app("a.b", .screenCapture, entry: -1, form: .quoted), reason: .printAllowed),
                         Decision(allowed: true, ruleParts: .app("a.b", .print, entry: -1, form: .quoted), reason: .printBlocked)]
        #expect(Set(decisions.compactMap(\.answerKey)).count == decisions.count)
        #expect(Set([DecisionRule.builtin(.print), .fixed(.unknownApp), .fixed(.sameApp), .defaults(.print, entry: -1)].map {
            Decision(allowed: true, ruleParts: $0, reason: .printAllowed).answerKey
        }).count == 4)
        #expect(Decision(allowed: true, ruleParts: .text("x"), reason: .printAllowed).answerKey == nil)
        #expect(Decision(allowed: true, rule: "dlp.print", reason: "r").answerKey == nil)
    }

    /// Each sentence is escaped once into its `json`, and no two share a text.
    @Test func everySentenceHasItsJSON() {
        for reason in DecisionReason.allCases {
            #expect(Array(reason.json) == JSONValue.string(reason.text).serialized())
        }
        #expect(Set(DecisionReason.allCases.map(\.text)).count == DecisionReason.allCases.count)
    }
}
