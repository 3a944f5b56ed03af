import ProctorPolicy
import Testing

/// The app-id table: ids past the slot's inline bytes, near-identical ids, empty policies.
@Suite struct EngineAppLookupTests {
    static let longPrefix = "com.example." + String(repeating: "segment.", count: 8)  // 76 bytes

    @Test func longIDsThatDifferOnlyPastTheInlineBytesAreDistinct() {
        let blocked = Self.longPrefix + "blocked"
        let allowed = Self.longPrefix + "allowed"
        let engine = CompiledPolicy(Policy(version: "1", apps: [
            blocked: AppPolicy(state: .blocked),
            allowed: AppPolicy(settings: AppSettings(dlp: DLPSettings(print: .allow))),
        ]))
        #expect(engine.decide(DecisionRequest(app: allowed, action: .print)).allowed)
        #expect(!engine.decide(DecisionRequest(app: blocked, action: .print)).allowed)
        #expect(engine.isManaged(allowed) && !engine.isManaged(blocked))
        #expect(!engine.isManaged(Self.longPrefix + "allowe"))
        #expect(!engine.isManaged(Self.longPrefix + "allowedx"))
        #expect(!engine.isManaged(String(allowed.prefix(48))))
    }

    /// A place remembered from one policy is used by that policy only: deciding under
    /// another (a reload) looks the app up again, whether it moved, changed state or is gone.
    @Test func aRememberedPlaceIsUsedOnlyByThePolicyItCameFrom() {
        let app = "com.example.notes"
        let others = (0..<40).map { "com.example.other\($0)" }
        let first = CompiledPolicy(Policy(version: "1", apps: [app: AppPolicy(settings: AppSettings(dlp: DLPSettings(print: .allow)))]))
        let moved = CompiledPolicy(Policy(version: "2", apps: Dictionary(uniqueKeysWithValues: others.map { ($0, AppPolicy()) })
            .merging([app: AppPolicy(settings: AppSettings(dlp: DLPSettings(print: .block)))]) { $1 }))
        let blocked = CompiledPolicy(Policy(version: "3", apps: [app: AppPolicy(state: .blocked)]))
        let gone = CompiledPolicy(Policy(version: "4", apps: [others[0]: AppPolicy()]))
        var place: CompiledPolicy.AppPlace?
        for engine in [first, first, moved, blocked, gone, gone, first, moved, moved, gone, blocked] {
            for action in [Action.print, .launch, .clipboardCopy] {
                let remembered = CompiledPolicy.withUTF8(of: others[1]) {
                    engine.engineDecision(app: app, remembering: &place, action, target: $0, size: nil, appVersion: nil)
                }
                #expect(remembered == engine.engineDecision(for: DecisionRequest(app: app, action: action, target: others[1])),
                        "\(engine.version)")
            }
        }
    }

    @Test func everyAppOfALargePolicyIsFoundAndNoOther() {
        let ids = (0..<5_000).map { "com.example.app\($0)" }
        let apps = Dictionary(uniqueKeysWithValues: ids.enumerated().map { index, id in
            (id, AppPolicy(state: index % 7 == 0 ? .blocked : .authorized))
        })
        let engine = CompiledPolicy(Policy(version: "1", apps: apps))
        for (index, id) in ids.enumerated() {
            #expect(engine.isManaged(id) == (index % 7 != 0), "\(id)")
        }
        for index in 5_000..<6_000 {
            #expect(!engine.isManaged("com.example.app\(index)"))
            #expect(engine.decide(DecisionRequest(app: "com.example.app\(index)", action: .print)).rule == "builtin.unknownApp")
        }
        #expect(engine.managedAppIDs.count == ids.count - ids.indices.filter { $0 % 7 == 0 }.count)
    }

    /// Records sit at their ids' table positions: each app of a large policy (with probe
    /// clusters) must decide from its own record, not a neighbour's.
    @Test func everyAppOfALargePolicyDecidesFromItsOwnRecord() {
        let ids = (0..<5_000).map { "com.example.app\($0)" }
        let apps = Dictionary(uniqueKeysWithValues: ids.enumerated().map { index, id in
            (id, AppPolicy(state: index % 11 == 0 ? .retired : .authorized,
                           settings: AppSettings(dlp: DLPSettings(print: index % 2 == 0 ? .allow : .block))))
        })
        let engine = CompiledPolicy(Policy(version: "1", apps: apps))
        for (index, id) in ids.enumerated() {
            let decision = engine.decide(DecisionRequest(app: id, action: .print))
            if index % 11 == 0 {
                #expect(!decision.allowed && decision.rule == "apps[\"\(id)\"].state", "\(id)")
            } else {
                #expect(decision.allowed == (index % 2 == 0) && decision.rule == "apps[\"\(id)\"].dlp.print", "\(id)")
            }
            #expect(engine.effectiveRules(for: id)?["dlp"]?["print"] == .string(index % 2 == 0 ? "allow" : "block"), "\(id)")
        }
        #expect(engine.managedAppIDs == ids.indices.filter { $0 % 11 != 0 }.map { ids[$0] }.sorted())
    }

    @Test func anIDLongerThanAnyInPolicyIsUnknown() {
        let engine = CompiledPolicy(EngineFixtures.policy())
        let huge = EngineFixtures.managedTarget + String(repeating: "x", count: 1 << 20)
        #expect(!engine.isManaged(huge))
        #expect(engine.decide(DecisionRequest(app: huge, action: .print)).rule == "builtin.unknownApp")
        let share = engine.decide(DecisionRequest(app: EngineFixtures.managedTarget, action: .shareSend, target: huge))
        #expect(!share.allowed)
    }

    @Test func anEmptyPolicyKnowsNoApp() {
        let engine = CompiledPolicy(Policy(version: "empty"))
        for id in ["", "a", "com.example.notes", Self.longPrefix] {
            #expect(!engine.isManaged(id))
            #expect(engine.decide(DecisionRequest(app: id, action: .launch)).rule == "builtin.unknownApp")
        }
        #expect(engine.managedAppIDs.isEmpty)
    }
}
