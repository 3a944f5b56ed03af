import Foundation
import ProctorKitTesting
import Testing
@testable import NotesApp

/// The notes app's delegate under `FakeAgent`, an in-process proctord fed the app's own
/// policy entry (`policy.d/50-notes.json`), so the entry an administrator installs is the
/// one tested.
@Suite(.serialized) @MainActor struct NotesDelegateTests {
    /// The app's policy entry with a `version`, as it is once merged into a site's policy.
    static func policy(version: String = "site.1", changing change: (inout AppPolicy) -> Void = { _ in }) throws -> String {
        let entry = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../policy.d/50-notes.json").standardized.path
        let fragment = try PolicyFragment.parse(Array(try Data(contentsOf: URL(fileURLWithPath: entry))), source: entry)
        var policy = try Policy.merge([PolicyFragment(version: version), fragment])
        change(&policy.apps["com.example.notes", default: AppPolicy()])
        return policy.canonicalJSON.serializedString()
    }

    static func launch(_ delegate: NotesDelegate, policy: String) async throws -> (PolicyApplicationHarness, Application.LaunchDecision) {
        let harness = PolicyApplicationHarness(agent: try FakeAgent(policy: policy), appID: "com.example.notes",
                                               version: "2.4.0", delegate: delegate)
        return (harness, await harness.launch())
    }

    @Test func launchesWithItsManagedConfiguration() async throws {
        let delegate = NotesDelegate()
        let (_, decision) = try await Self.launch(delegate, policy: try Self.policy())
        #expect(decision == .proceed)
        #expect(delegate.syncDays == 14)
        #expect(delegate.serverURL == "https://notes.example.com")
        #expect(!delegate.copy("meeting at 10", to: "org.unmanaged.chat").allowed)
    }

    @Test func notificationsHideNotesUnderBlockOrgData() async throws {
        let delegate = NotesDelegate()
        let (harness, _) = try await Self.launch(delegate, policy: try Self.policy())
        #expect(delegate.notificationText(forNewNoteTitled: "Q3 plan") == "1 new note")

        try harness.agent.apply(policy: try Self.policy(version: "site.2") { $0.settings.dlp.notifications = .allow })
        try await eventually { delegate.notificationText(forNewNoteTitled: "Q3 plan") == "New note: Q3 plan" }

        try harness.agent.apply(policy: try Self.policy(version: "site.3") { $0.settings.dlp.notifications = .block })
        try await eventually { delegate.notificationText(forNewNoteTitled: "Q3 plan") == nil }
    }

    @Test func followsConfigurationChangesAndCommands() async throws {
        let delegate = NotesDelegate()
        let (harness, _) = try await Self.launch(delegate, policy: try Self.policy())
        try harness.agent.apply(policy: try Self.policy(version: "site.2") { $0.config = ["syncDays": 3] })
        try await eventually { delegate.syncDays == 3 }

        #expect(try harness.agent.notify(appID: "com.example.notes", payload: ["command": "sync"]) == 1)
        try await eventually { delegate.syncCount == 1 }
    }

    @Test func aBlockedAppNeverStarts() async throws {
        let delegate = NotesDelegate()
        let (_, decision) = try await Self.launch(delegate, policy: try Self.policy { $0.state = .blocked })
        #expect(decision == .refuse(reason: "blocked by policy: the administrator blocked com.example.notes",
                                    exitStatus: .blockedByPolicy))
        #expect(delegate.blockedReason == "the administrator blocked com.example.notes")
        #expect(delegate.serverURL == nil, "didFinishLaunching never came")
    }
}

/// Waits up to five seconds for `condition`: pushes from the agent arrive on the main actor.
@MainActor
func eventually(_ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(5)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("the condition did not become true within 5 s")
            return
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}
