import JSONCore
@testable import ProctorPolicy
import Testing

/// `EngineDecision.writeAnswer(to:askingApp:)` writes what an app's `Decide` is answered without
/// making the rule or the reason a `String`: its bytes must be those of the members of
/// `Decision(_:askingApp:)` serialized, for every sentence and every kind of rule, including
/// those whose text needs escapes.
@Suite struct DecisionAnswerTests {
    private static func serialized(_ decision: EngineDecision, _ app: AppID) -> [UInt8] {
        let decision = Decision(decision, askingApp: app)
        return JSONValue.object(["allowed": .bool(decision.allowed), "rule": .string(decision.rule),
                                 "reason": .string(decision.reason)]).serialized()
    }

    private static func written(_ decision: EngineDecision, _ app: AppID) -> [UInt8] {
        var bytes: [UInt8] = [7]
        decision.writeAnswer(to: &bytes, askingApp: app)
        return Array(bytes.dropFirst())
    }

    /// App ids of every key form: identifiers, quoted (dots, dashes, non-ASCII, DEL), and
    /// escaped (quotes, backslashes, control characters), and the empty id.
    static let appIDs = ["notes", "_x9", "com.example.notes", "9lives", "com.ex-ample.app", "com.exämple.app 𝄞",
                         "del\u{7F}", "say \"hi\"", "back\\slash", "tab\there", "nul\u{0}\u{1F}", ""]

    /// Every kind of rule for the asking app `id`: app entry and defaults (the setting and list
    /// entries of one to ten digits), built-in and fixed.
    static func rules(for id: String) -> [DecisionRule] {
        let form = DecisionRule.keyForm(of: id)
        let rules: [DecisionRule] = RuleSetting.allCases.flatMap { setting in
            [-1, 0, 7, 12, 1234, Int(Int32.max)].flatMap { entry in
                [DecisionRule.app(setting, entry: Int32(entry), form: form), .defaults(setting, entry: Int32(entry))]
            } + [.builtin(setting)]
        }
        return rules + FixedRule.allCases.map { .fixed($0) }
    }

    /// `appendRule(to:askingApp:)` renders in the array's spare capacity: after what the array
    /// held, the rule's UTF-8, whatever room the array had (none spare, or plenty).
    @Test(arguments: appIDs)
    func everyRuleIsAppendedAsItsText(id: String) {
        for rule in Self.rules(for: id) {
            let decision = EngineDecision(allowed: false, rule: rule, reason: .exportDenied)
            let text = decision.rule(askingApp: id)
            var tight: [UInt8] = [1, 2]
            var roomy: [UInt8] = [1, 2]
            roomy.reserveCapacity(4096)
            decision.appendRule(to: &tight, askingApp: id)
            decision.appendRule(to: &roomy, askingApp: id)
            #expect(tight == [1, 2] + Array(text.utf8) && roomy == tight, "\(text)")
            #expect(decision.ruleByteCount(askingApp: id) == text.utf8.count)
            #expect(Decision(decision, askingApp: id).rule == text)
        }
    }

    /// `appendRule(to:askingApp:)` makes room for a rendered rule without measuring its suffix
    /// and entry.
    @Test func roomForTheLongestSuffixAndEntry() {
        #expect(RuleSetting.allCases.map(\.suffix.utf8CodeUnitCount).max() == DecisionRule.longestSuffix)
        let decision = EngineDecision(allowed: false, rule: .defaults(.offlineGraceSeconds, entry: .max), reason: .exportDenied)
        #expect(decision.ruleByteCount(askingApp: "a.b")
                == "defaults".utf8.count + DecisionRule.longestSuffix + DecisionRule.longestEntry)
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
                    let decision = EngineDecision(allowed: allowed, rule: rule, reason: reason)
                    #expect(Self.written(decision, id) == Self.serialized(decision, id),
                            "\(decision.rule(askingApp: id)) / \(reason)")
                }
            }
        }
    }

    /// `DecisionAnswers` writes each answer as `writeAnswer(to:askingApp:between:and:)` does,
    /// whether it renders it or copies what it kept: for one app (of every key form) every rule
    /// kind, entry and sentence, both outcomes, in an order that mixes them, three times over
    /// (far more answers than it keeps, so its bound is crossed).
    @Test(arguments: appIDs)
    func keptAnswersAreTheAnswersWritten(id: String) {
        let form = DecisionRule.keyForm(of: id)
        var decisions: [EngineDecision] = []
        for setting in RuleSetting.allCases {
            for entry in [-1, 0, 7, 1234] {
                for rule in [DecisionRule.app(setting, entry: Int32(entry), form: form),
                             .defaults(setting, entry: Int32(entry)), .builtin(setting),
                             .fixed(FixedRule.allCases[entry & 3])] {
                    for reason in DecisionReason.allCases {
                        decisions.append(EngineDecision(allowed: reason.rawValue % 2 == 0, rule: rule, reason: reason))
                    }
                }
            }
        }
        // Every 97th in turn: neighbours differ in rule kind, setting and entry.
        decisions = decisions.indices.sorted { ($0 % 97, $0) < ($1 % 97, $1) }.map { decisions[$0] }
        let repeated = Array(decisions.prefix(40))
        var answers = DecisionAnswers(to: id, between: #"{"parameters":"#, and: "}\0")
        for decision in repeated + decisions + repeated + decisions.reversed() + repeated {
            var kept: [UInt8] = [7], written: [UInt8] = [7]
            answers.write(decision, to: &kept)
            decision.writeAnswer(to: &written, askingApp: id, between: #"{"parameters":"#, and: "}\0")
            #expect(kept == written, "\(decision.rule(askingApp: id)) / \(decision.reasonText)")
        }
    }

    /// Answers are kept by what fixes their bytes: two decisions with the same key write the same.
    @Test func answersDifferingInOutcomeOrRuleHaveDifferentKeys() {
        let decisions = [EngineDecision(allowed: true, rule: .app(.print, entry: -1, form: .quoted), reason: .printAllowed),
                         EngineDecision(allowed: false, rule: .app(.print, entry: -1, form: .quoted), reason: .printAllowed),
                         EngineDecision(allowed: true, rule: .defaults(.print, entry: -1), reason: .printAllowed),
                         EngineDecision(allowed: true, rule: .app(.print, entry: 0, form: .quoted), reason: .printAllowed),
                         EngineDecision(allowed: true, rule: .app(.screenCapture, entry: -1, form: .quoted), reason: .printAllowed),
                         EngineDecision(allowed: true, rule: .app(.print, entry: -1, form: .quoted), reason: .printBlocked)]
        #expect(Set(decisions.map(\.answerKey)).count == decisions.count)
        #expect(Set([DecisionRule.builtin(.print), .fixed(.unknownApp), .fixed(.sameApp), .defaults(.print, entry: -1)].map {
            EngineDecision(allowed: true, rule: $0, reason: .printAllowed).answerKey
        }).count == 4)
    }

    /// Each sentence is escaped once into its `json`, and no two share a text.
    @Test func everySentenceHasItsJSON() {
        for reason in DecisionReason.allCases {
            #expect(Array(reason.json) == JSONValue.string(reason.text).serialized())
        }
        #expect(Set(DecisionReason.allCases.map(\.text)).count == DecisionReason.allCases.count)
    }
}
