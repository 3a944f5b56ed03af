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

    @Test(arguments: appIDs)
    func everyRuleAndSentenceIsWrittenAsSerialized(id: String) {
        let form = DecisionRule.keyForm(of: id)
        var rules: [DecisionRule] = RuleSetting.allCases.flatMap { setting in
            [-1, 0, 7, 12, 1234].flatMap { entry in
                [DecisionRule.app(id, setting, entry: Int32(entry), form: form), .defaults(setting, entry: Int32(entry))]
            } + [.text(setting.builtinRule)]
        }
        rules += [.text(""), .text("sdk.offlineGrace ✓"), .text("a \"quoted\" \\ rule\n\t\r\u{1}\u{1F}\u{7F} é 𝄞")]
        for rule in rules {
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

    /// Each sentence is escaped once into its `json`, and no two share a text.
    @Test func everySentenceHasItsJSON() {
        for reason in DecisionReason.allCases {
            #expect(Array(reason.json) == JSONValue.string(reason.text).serialized())
        }
        #expect(Set(DecisionReason.allCases.map(\.text)).count == DecisionReason.allCases.count)
    }
}
