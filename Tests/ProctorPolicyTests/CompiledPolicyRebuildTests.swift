import JSONCore
@testable import ProctorPolicy
import Testing
import TestSupport

/// A compiled policy keeps no parsed `Policy`: `appPolicy` and `policy` rebuild it from the
/// compiled form, and must give back exactly what was compiled — equal, and with the same
/// canonical bytes (which `GetPolicy`, the policy's sha256 and the views are made of).
@Suite struct CompiledPolicyRebuildTests {
    private func expectRebuilds(_ policy: Policy, _ comment: Comment? = nil) {
        let compiled = CompiledPolicy(policy)
        for (id, app) in policy.apps {
            let rebuilt = compiled.appPolicy(id)
            #expect(rebuilt == app, comment)
            // `==` of a version ignores build metadata: the canonical form does not.
            #expect(rebuilt.map { Policy(version: "v", apps: [id: $0]).canonicalBytes }
                        == Policy(version: "v", apps: [id: app]).canonicalBytes, comment)
            #expect(compiled.state(of: id) == app.state, comment)
        }
        let whole = compiled.policy
        #expect(whole == policy, comment)
        #expect(whole.canonicalBytes == policy.canonicalBytes, comment)
        #expect(compiled.version == policy.version && compiled.appCount == policy.apps.count, comment)
        #expect(compiled.appIDs == policy.apps.keys.sorted(), comment)
        #expect(compiled.managedAppIDs == policy.apps.filter { $0.value.state == .authorized }.keys.sorted(), comment)
        #expect(compiled.isCompiled(from: policy), comment)
    }

    @Test func rebuildsEveryAppOfGeneratedPolicies() {
        var generator = SeededGenerator(seed: 0xC0DE)
        for round in 0..<40 {
            expectRebuilds(Self.randomPolicy(apps: round * 7, using: &generator), "round \(round)")
        }
    }

    @Test func rebuildsOddIdsValuesAndEscapes() {
        let long = "com." + String(repeating: "very-long-segment.", count: 6) + "app"  // beyond the table's inline 48 bytes
        let apps: [AppID: AppPolicy] = [
            long: AppPolicy(match: MatchRule(executable: "/opt/Ünïcode \"quoted\"\\path\u{1}/bin", users: [])),
            "a.b": AppPolicy(state: .blocked, match: MatchRule()),
            "0-x.1-y": AppPolicy(state: .retired, config: ["text": "tab\tquote\"slash\\nul\u{0}é😀", "nested": ["a": [1, 2.5, nil, true]],
                                                           "empty": [:]]),
            "com.example.build-a": AppPolicy(settings: AppSettings(compliance: ComplianceSettings(
                minVersion: SemanticVersion("1.2.3+build.a"), offlineWipeSeconds: 7))),
            "com.example.build-b": AppPolicy(settings: AppSettings(compliance: ComplianceSettings(
                minVersion: SemanticVersion("1.2.3+build.b")))),
            "com.example.pre": AppPolicy(settings: AppSettings(compliance: ComplianceSettings(minVersion: SemanticVersion("1.2.3-rc.1")))),
            "com.example.two-parts": AppPolicy(settings: AppSettings(compliance: ComplianceSettings(minVersion: SemanticVersion("2.3")))),
            "com.example.kernel": AppPolicy(settings: AppSettings(dlp: DLPSettings(fileExportEnforcement: .kernel))),
            "com.example.same-as-defaults": AppPolicy(settings: AppSettings(dlp: DLPSettings(
                clipboardLevel: .managed, shareExempt: ["com.example.*"], fileExportDeny: ["/tmp/**"]))),
        ]
        // Defaults that say what some apps say again: an app's own value must not be taken
        // for an inherited one, or the other way round.
        let defaults = AppSettings(dlp: DLPSettings(clipboardLevel: .managed, shareExempt: ["com.example.*"],
                                                    fileExportDeny: ["/tmp/**"], fileExportEnforcement: .advisory),
                                   compliance: ComplianceSettings(minVersion: SemanticVersion("1.2.3+build.a"), offlineWipeSeconds: 60))
        expectRebuilds(Policy(version: "odd", defaults: defaults, apps: apps))
        expectRebuilds(Policy(version: "empty"))
    }

    /// Swift's `String ==` is canonical equivalence: "café" composed (NFC) and decomposed
    /// (NFD) are equal strings of different bytes. Paths are bytes to the kernel and to
    /// `PathGlob`, so two apps' lists that differ only so must each keep their own bytes —
    /// in the rebuilt policy and in what a decision matches.
    @Test func canonicallyEquivalentPathListsStayApart() {
        let composed = "/media/caf\u{E9}/**", decomposed = "/media/cafe\u{301}/**"
        #expect(composed == decomposed && Array(composed.utf8) != Array(decomposed.utf8))
        let apps: [AppID: AppPolicy] = [
            "com.example.a": AppPolicy(settings: AppSettings(dlp: DLPSettings(fileExportDeny: [composed]))),
            "com.example.b": AppPolicy(settings: AppSettings(dlp: DLPSettings(fileExportDeny: [decomposed]))),
        ]
        let policy = Policy(version: "nfc-nfd", apps: apps)
        expectRebuilds(policy)
        let compiled = CompiledPolicy(policy)
        for (id, path) in [("com.example.a", "/media/caf\u{E9}/x"), ("com.example.b", "/media/cafe\u{301}/x")] {
            #expect(!compiled.decide(DecisionRequest(app: id, action: .fileExport, target: path)).allowed, "\(id)")
        }
    }

    /// `isCompiled(from:)` compares bytes: a policy whose only difference is a string's Unicode
    /// form (é composed or decomposed, which `String`'s `==` calls equal) was not compiled from it.
    @Test func isCompiledFromComparesTheBytesOfEveryString() {
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        func policy(_ word: String, in place: Int) -> Policy {
            func at(_ position: Int, _ other: String = "cafe") -> String { place == position ? word : other }
            var app = AppPolicy(match: MatchRule(executable: "/opt/\(at(0))/bin/app"),
                                config: ["greeting": .string(at(1)), at(2): .array([.object([at(3): .string(at(4))])])],
                                settings: AppSettings(dlp: DLPSettings(fileExportAllow: ["/srv/\(at(5))/**"],
                                                                       fileExportDeny: ["/srv/\(at(6))/private/**"])))
            app.state = .authorized
            return Policy(version: "v-\(at(7))", defaults: AppSettings(dlp: DLPSettings(fileExportDeny: ["/tmp/\(at(8))"])),
                          apps: ["com.example.app": app])
        }
        for place in 0...8 {
            let original = policy(composed, in: place), respelt = policy(decomposed, in: place)
            #expect(original == respelt, "place \(place): String's == is canonical equivalence")
            let compiled = CompiledPolicy(original)
            #expect(compiled.isCompiled(from: original), "place \(place)")
            #expect(!compiled.isCompiled(from: respelt), "place \(place): other bytes")
        }
    }

    /// `SemanticVersion`'s `==` is precedence, which ignores build metadata, but the canonical
    /// form and the compiled policy keep it: a minimum whose only change is its `+build` part
    /// is another policy, in an app entry as under `defaults`.
    @Test func isCompiledFromComparesAMinimumVersionsBuildMetadata() throws {
        func policy(_ minimum: String, inDefaults: Bool) throws -> Policy {
            let version = try #require(SemanticVersion(minimum))
            var app = AppPolicy()
            app.state = .authorized
            var defaults = AppSettings()
            if inDefaults { defaults.compliance.minVersion = version } else { app.settings.compliance.minVersion = version }
            return Policy(version: "v1", defaults: defaults, apps: ["com.example.app": app])
        }
        for inDefaults in [false, true] {
            let original = try policy("1.2.3+linux", inDefaults: inDefaults), rebuilt = try policy("1.2.3+macos", inDefaults: inDefaults)
            #expect(original == rebuilt, "SemanticVersion's == ignores build metadata")
            #expect(original.sha256 != rebuilt.sha256, "the canonical form keeps it")
            let compiled = CompiledPolicy(original)
            #expect(compiled.isCompiled(from: original))
            #expect(!compiled.isCompiled(from: rebuilt), "defaults: \(inDefaults): another build is another policy")
        }
    }

    @Test func rebuildsTheExamplePolicies() throws {
        let loaded = try PolicyDirectory.load(PolicyTestSupport.repositoryRoot + "/config/examples")
        expectRebuilds(loaded.policy)
    }

    @Test func isCompiledFromAgreesWithPolicyEquality() {
        var generator = SeededGenerator(seed: 0xE0)
        let policy = Self.randomPolicy(apps: 50, using: &generator)
        let compiled = CompiledPolicy(policy)
        var changed = policy
        let id = policy.apps.keys.sorted()[17]
        changed.apps[id]?.settings.dlp.print = policy.apps[id]?.settings.dlp.print == .allow ? .block : .allow
        #expect(!compiled.isCompiled(from: changed))
        changed = policy
        changed.apps["com.example.added"] = AppPolicy()
        #expect(!compiled.isCompiled(from: changed))
        changed = policy
        changed.apps.removeValue(forKey: id)
        changed.apps["com.example.instead"] = policy.apps[id]
        #expect(!compiled.isCompiled(from: changed))
        changed = policy
        changed.version += ".1"
        #expect(!compiled.isCompiled(from: changed))
        changed = policy
        changed.defaults.dlp.print = .block
        #expect(compiled.isCompiled(from: changed) == (policy.defaults.dlp.print == .block))
        #expect(compiled.appPolicy("com.example.nowhere") == nil && compiled.state(of: "com.example.nowhere") == nil)
    }

    /// A policy of `apps` apps in which each setting is said or not at random, with values
    /// drawn from small sets so that lists and versions are shared between apps.
    static func randomPolicy(apps count: Int, using generator: inout SeededGenerator) -> Policy {
        func maybe<Value>(_ value: @autoclosure () -> Value) -> Value? {
            Bool.random(using: &generator) ? value() : nil
        }
        func pick<Value>(_ values: [Value]) -> Value { values.randomElement(using: &generator)! }
        let globs = [["com.partner.*"], ["org.a", "org.b.*", "org.a"], [], ["*"]]
        let paths = [["/tmp/**"], ["/home/*/Documents/**", "/srv/x/*.pdf"], []]
        let versions = ["1.0.0", "2.3", "1.0.0+meta", "1.0.0-alpha.1", "10.20.30-rc.1+b.2"].compactMap { SemanticVersion($0) }
        func settings() -> AppSettings {
            AppSettings(
                dlp: DLPSettings(clipboardLevel: maybe(pick(ClipboardLevel.allCases)),
                                 clipboardCharLimit: maybe(Int.random(in: 0...100_000, using: &generator)),
                                 shareSend: maybe(pick(ShareLevel.allCases)), shareReceive: maybe(pick(ShareLevel.allCases)),
                                 shareExempt: maybe(pick(globs)), print: maybe(pick(Toggle.allCases)),
                                 screenCapture: maybe(pick(Toggle.allCases)), fileExportAllow: maybe(pick(paths)),
                                 fileExportDeny: maybe(pick(paths)), fileExportEnforcement: maybe(pick(ExportEnforcement.allCases)),
                                 notifications: maybe(pick(NotificationLevel.allCases))),
                compliance: ComplianceSettings(minVersion: maybe(pick(versions)), onViolation: maybe(pick(Violation.allCases)),
                                               offlineGraceSeconds: maybe(Int.random(in: 0...1_000_000, using: &generator)),
                                               offlineWipeSeconds: maybe(Int.random(in: 1...2_000_000, using: &generator))))
        }
        var apps: [AppID: AppPolicy] = [:]
        for index in 0..<count {
            let match = maybe(MatchRule(executable: maybe("/usr/bin/app-\(index)"), users: maybe(pick([["*"], ["alice", "bob"], []]))))
            let config: [String: JSONValue] = Bool.random(using: &generator) ? [:] : ["index": .number(index), "name": .string("app \(index)")]
            apps["com.random.app\(index)"] = AppPolicy(state: pick(AppState.allCases), match: match, config: config, settings: settings())
        }
        return Policy(version: "random-\(count)", defaults: settings(), apps: apps)
    }
}
