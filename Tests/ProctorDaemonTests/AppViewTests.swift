import Foundation
import JSONCore
import ProctorPolicy
import ProctorProtocol
@testable import ProctorDaemon
import Testing

/// What a subscriber is told, and when: `Daemon.activate` sends a `Subscribe` reply only to
/// sessions whose `AppView` changed, so these comparisons are the daemon's change detection.
@Suite struct AppViewTests {
    private func policy(_ text: String) throws -> Policy {
        try Policy.parse(Array(text.utf8), source: nil)
    }

    private func compiled(_ text: String) throws -> CompiledPolicy {
        CompiledPolicy(try policy(text))
    }

    private let base = """
        {"schema": 1, "version": "1",
         "defaults": {"dlp": {"print": "block"}},
         "apps": {
           "com.example.notes": {"state": "authorized", "config": {"syncDays": 14},
                                 "dlp": {"clipboard": {"level": "managed"}}},
           "com.example.mail": {"state": "authorized", "dlp": {"print": "allow"}}}}
        """

    @Test func anAppOutsideThePolicyHasNoView() throws {
        #expect(AppView(of: "com.example.unknown", in: try compiled(base)) == nil)
    }

    @Test func theViewCarriesStateConfigAndEffectiveRules() throws {
        let view = try #require(AppView(of: "com.example.notes", in: try compiled(base)))
        #expect(view.state == .authorized)
        #expect(view.config == ["syncDays": 14])
        #expect(view.dlp["clipboard"]?["level"] == "managed")
        #expect(view.dlp["print"] == "block")  // from defaults
    }

    @Test func aNewVersionThatDoesNotConcernTheAppChangesNothing() throws {
        let before = AppView(of: "com.example.notes", in: try compiled(base))
        let otherAppChanged = base.replacingOccurrences(of: "\"version\": \"1\"", with: "\"version\": \"2\"")
            .replacingOccurrences(of: "\"print\": \"allow\"", with: "\"print\": \"block\"")
        #expect(AppView(of: "com.example.notes", in: try compiled(otherAppChanged)) == before)
        #expect(AppView(of: "com.example.mail", in: try compiled(otherAppChanged))
            != AppView(of: "com.example.mail", in: try compiled(base)))
    }

    @Test func configStateAndInheritedDefaultsEachChangeTheView() throws {
        let before = AppView(of: "com.example.notes", in: try compiled(base))
        let config = base.replacingOccurrences(of: "\"syncDays\": 14", with: "\"syncDays\": 30")
        let state = base.replacingOccurrences(of: "\"state\": \"authorized\", \"config\"", with: "\"state\": \"blocked\", \"config\"")
        let defaults = base.replacingOccurrences(of: "\"defaults\": {\"dlp\": {\"print\": \"block\"}}",
                                                 with: "\"defaults\": {\"dlp\": {\"print\": \"allow\"}}")
        for changed in [config, state, defaults] {
            #expect(changed != base)
            #expect(AppView(of: "com.example.notes", in: try compiled(changed)) != before)
        }
        // mail sets print itself: the default's change does not reach it.
        #expect(AppView(of: "com.example.mail", in: try compiled(defaults))
            == AppView(of: "com.example.mail", in: try compiled(base)))
    }
}

/// The policy in force: `policy.d` overlaid by the applied bundle (the bundle wins).
@Suite struct ActivePolicyTests {
    private func policy(_ text: String) throws -> Policy {
        try Policy.parse(Array(text.utf8), source: nil)
    }

    private let directoryText = """
        {"schema": 1, "version": "dir.1",
         "defaults": {"dlp": {"clipboard": {"level": "blocked", "charLimit": 10}, "print": "block"}},
         "apps": {"com.example.only-dir": {"state": "authorized", "config": {"from": "dir"}},
                  "com.example.both": {"state": "authorized", "config": {"from": "dir", "dirOnly": true}}}}
        """

    private let bundleText = """
        {"schema": 1, "version": "bundle.1",
         "defaults": {"dlp": {"clipboard": {"level": "any"}, "screenCapture": "block"}},
         "apps": {"com.example.both": {"state": "blocked", "config": {"from": "bundle"}},
                  "com.example.only-bundle": {"state": "authorized"}}}
        """

    @Test func theBundleWinsPerAppEntryAndPerDefaultSetting() throws {
        let directory = LoadedPolicy(policy: try policy(directoryText), sources: ["00-base.json", "10-more.json"])
        let active = ActivePolicy(directory: .loaded(directory), bundle: CanonicalPolicy(try policy(bundleText)), bundleVersion: "bundle.1", loadedAt: 0)
        #expect(active.version == "bundle.1")
        // The bundle's own hash is not the merged policy's.
        #expect(active.sha256 == directory.policy.overlaying(try policy(bundleText)).sha256)
        #expect(active.sources == ["policy.d/00-base.json", "policy.d/10-more.json", "applied bundle bundle.1"])
        let apps = active.compiled.policy.apps
        #expect(apps["com.example.only-dir"]?.config == ["from": "dir"])
        #expect(apps["com.example.both"]?.config == ["from": "bundle"])
        #expect(apps["com.example.both"]?.state == .blocked)
        #expect(apps["com.example.only-bundle"] != nil)
        let rules = try #require(active.compiled.effectiveRules(for: "com.example.only-dir"))
        #expect(rules["dlp"]?["clipboard"] == ["level": "any", "charLimit": 10])
        #expect(rules["dlp"]?["print"] == "block")
        #expect(rules["dlp"]?["screenCapture"] == "block")
    }

    /// policy.d is kept compiled on its own under a bundle (the same compiled policy as the
    /// one in force without one), and a later bundle laid over the kept form gives what it
    /// gives over the directory as read.
    @Test func theDirectoryIsKeptCompiledAndOverlaidAgain() throws {
        let directory = LoadedPolicy(policy: try policy(directoryText), sources: ["00-base.json"])
        let bundle = CanonicalPolicy(try policy(bundleText))
        let active = ActivePolicy(directory: .loaded(directory), bundle: bundle, bundleVersion: "bundle.1", loadedAt: 1)
        let kept = try #require(active.directory)
        #expect(kept.compiled.policy == directory.policy && kept.compiled.policy.canonicalBytes == directory.policy.canonicalBytes)
        #expect(kept.sources == ["00-base.json"])
        let again = ActivePolicy(directory: .kept(kept), bundle: bundle, bundleVersion: "bundle.1", loadedAt: 2)
        #expect(again.sha256 == active.sha256 && again.sources == active.sources)
        #expect(again.compiled.policy.canonicalBytes == active.compiled.policy.canonicalBytes)
        let alone = ActivePolicy(directory: .loaded(directory), bundle: nil, bundleVersion: nil, loadedAt: 1)
        #expect(alone.directory?.compiled.policy == alone.compiled.policy)
        let reread = alone.reread(from: LoadedPolicy(policy: directory.policy, sources: ["00-base.json", "99-empty.json"]),
                                  bundleVersion: nil, at: 3)
        #expect(reread.directory?.sources == ["00-base.json", "99-empty.json"] && reread.sources.count == 2)
    }

    @Test func eitherSourceAloneIsThePolicy() throws {
        let directory = LoadedPolicy(policy: try policy(directoryText), sources: ["00-base.json"])
        let directoryOnly = ActivePolicy(directory: .loaded(directory), bundle: nil, bundleVersion: nil, loadedAt: 5)
        #expect(directoryOnly.version == "dir.1")
        #expect(directoryOnly.sources == ["policy.d/00-base.json"])
        #expect(directoryOnly.sha256 == directory.policy.sha256)
        let bundle = try policy(bundleText)
        let bundleOnly = ActivePolicy(directory: nil, bundle: CanonicalPolicy(bundle), bundleVersion: "bundle.1", loadedAt: 5)
        #expect(bundleOnly.sources == ["applied bundle bundle.1"])
        #expect(bundleOnly.sha256 == bundle.sha256)
        #expect(bundleOnly.info.sha256 == bundle.sha256)
        #expect(CanonicalPolicy(bundle).text == String(decoding: bundle.canonicalBytes, as: UTF8.self))
        #expect(bundleOnly.info.loadedAt == "1970-01-01T00:00:00.005Z")
    }

    /// The managed apps' list and digest that views carry are made with the policy (off the
    /// loop): the authorized apps of the merged policy, sorted.
    @Test func theManagedAppsAreTheMergedPolicysAuthorizedApps() throws {
        let directory = LoadedPolicy(policy: try policy(directoryText), sources: ["00-base.json"])
        let merged = ActivePolicy(directory: .loaded(directory), bundle: CanonicalPolicy(try policy(bundleText)), bundleVersion: "bundle.1", loadedAt: 1)
        #expect(merged.managedAppIDs == ["com.example.only-bundle", "com.example.only-dir"])
        #expect(merged.managedAppsDigest == Agent.AppViewPayload.digest(managedApps: ["com.example.only-bundle", "com.example.only-dir"]))
        let directoryOnly = ActivePolicy(directory: .loaded(directory), bundle: nil, bundleVersion: nil, loadedAt: 1)
        #expect(directoryOnly.managedAppIDs == ["com.example.both", "com.example.only-dir"])
        #expect(directoryOnly.managedAppsDigest != merged.managedAppsDigest)
    }

    @Test func theSameSourcesGiveTheSameDigest() throws {
        let directory = LoadedPolicy(policy: try policy(directoryText), sources: ["00-base.json"])
        let first = ActivePolicy(directory: .loaded(directory), bundle: CanonicalPolicy(try policy(bundleText)), bundleVersion: "bundle.1", loadedAt: 1)
        let second = ActivePolicy(directory: .loaded(directory), bundle: CanonicalPolicy(try policy(bundleText)), bundleVersion: "bundle.1", loadedAt: 2)
        #expect(first.sha256 == second.sha256)
        let withoutBundle = ActivePolicy(directory: .loaded(directory), bundle: nil, bundleVersion: nil, loadedAt: 1)
        #expect(first.sha256 != withoutBundle.sha256)
    }
}
