import Foundation
import JSONCore
import ProctorKit
import ProctorKitTesting
import ProctorPolicy
import Testing
import TestSupport

/// What an app developer writes with ProctorKitTesting: the delegate under test runs in this
/// process, against a FakeAgent fed a policy document, with no daemon.
@MainActor
final class RecordingDelegate: ApplicationDelegate {
    var calls: [String] = []
    /// What `application(_:didReceivePolicyChange:)` answers.
    var policyAnswer: PolicyAcknowledgement = .applied
    init() {}
    func application(_ application: Application,
                     didFinishLaunchingWithOptions launchOptions: [Application.LaunchOptionsKey: Any]?) -> Bool {
        calls.append("didFinishLaunching serverURL=\(ManagedConfiguration.shared.string(forKey: "serverURL") ?? "nil")")
        return true
    }
    func applicationDidBecomeActive(_ application: Application) { calls.append("didBecomeActive") }
    func applicationManagedConfigurationDidChange(_ application: Application) {
        calls.append("managedConfigurationDidChange syncDays=\(ManagedConfiguration.shared.integer(forKey: "syncDays") ?? -1)")
    }
    func application(_ application: Application, didReceiveRemoteNotification userInfo: [String: JSONValue]) {
        calls.append("didReceiveRemoteNotification \(JSONValue.object(userInfo).serializedString())")
    }
    func applicationWasBlocked(_ application: Application, reason: String) { calls.append("wasBlocked \(reason)") }
    func applicationShouldWipeData(_ application: Application, directive: WipeDirective) {
        calls.append("shouldWipeData \(directive.id ?? "\(directive.cause)")")
    }
    func application(_ application: Application, didReceivePolicyChange change: PolicyChange) -> PolicyAcknowledgement {
        policyAnswer
    }
    func application(_ application: Application, complianceDidChange compliance: ComplianceState) {
        switch compliance {
        case .compliant: calls.append("complianceDidChange compliant")
        case .warning(let reason): calls.append("complianceDidChange warning \(reason)")
        case .violation(let reason): calls.append("complianceDidChange violation \(reason)")
        }
    }
}

@Suite(.serialized) @MainActor struct TestKitTests {
    static func policy(version: String = "1", syncDays: Int = 14, notesState: String = "authorized",
                       minVersion: String = "2.0.0", onViolation: String = "block") -> String {
        """
        {"schema": 1, "version": "\(version)",
         "apps": {
           "com.example.notes": {"state": "\(notesState)",
             "config": {"serverURL": "https://notes.example.com", "syncDays": \(syncDays)},
             "dlp": {"clipboard": {"level": "managed"}, "print": "block"},
             "compliance": {"minVersion": "\(minVersion)", "onViolation": "\(onViolation)", "offlineGraceSeconds": 3600}},
           "com.example.mail": {"state": "authorized"}}}
        """
    }

    /// Waits on the main actor (letting pushes arrive) until `condition` holds.
    func eventually(_ what: String, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw TestSupportError("timed out waiting for \(what)") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test func delegateLaunchesAndSeesPushedConfigurationAndNotifications() async throws {
        let agent = try FakeAgent(policy: Self.policy())
        let delegate = RecordingDelegate()
        let harness = PolicyApplicationHarness(agent: agent, appID: "com.example.notes", version: "2.1.0", delegate: delegate)
        #expect(await harness.launch() == .proceed)
        #expect(delegate.calls == ["didFinishLaunching serverURL=https://notes.example.com", "didBecomeActive"])
        #expect(DataGuard.shared.canCopy(to: "com.example.mail", length: 10).allowed)
        #expect(!DataGuard.shared.canCopy(to: "org.example.other", length: 10).allowed)
        #expect(!DataGuard.shared.canPrint().allowed)

        try await eventually("the subscription") { agent.subscribedSessionCount == 1 }
        try agent.apply(policy: Self.policy(version: "2", syncDays: 30))
        try await eventually("the pushed change") { delegate.calls.count == 3 }
        #expect(delegate.calls.last == "managedConfigurationDidChange syncDays=30")
        try agent.notify(appID: "com.example.notes", payload: ["command": "sync"])
        try await eventually("the notification") { delegate.calls.count == 4 }
        #expect(delegate.calls.last == #"didReceiveRemoteNotification {"command":"sync"}"#)

        try await eventually("the acknowledgements and events") {
            agent.feedback.filter { $0.key == "policy" }.count == 2 && agent.events.count == 6
        }
        #expect(agent.feedback.filter { $0.key == "policy" }.map { $0.data?["version"]?.stringValue } == ["1", "2"])
        #expect(agent.events.map(\.event) == ["didFinishLaunching", "didBecomeActive", "dataActionDenied", "dataActionDenied",
                                              "managedConfigurationDidChange", "didReceiveRemoteNotification"])
        #expect(agent.events[3].detail?["action"]?.stringValue == "print")
    }

    /// The harness runs the app inside the test process, which Landlock must not confine: under
    /// `enforcement: "kernel"` the app launches, the process still writes anywhere, and the SDK
    /// reports advisory enforcement with the reason.
    @Test func kernelEnforcementNeverConfinesTheTestProcess() async throws {
        let agent = try FakeAgent(policy: #"{"schema": 1, "version": "1", "apps": {"com.example.notes": {"state": "authorized", "#
                                  + #""dlp": {"fileExport": {"allow": ["/nonexistent/**"], "enforcement": "kernel"}}}}}"#)
        let delegate = RecordingDelegate()
        let harness = PolicyApplicationHarness(agent: agent, appID: "com.example.notes", version: "2.1.0", delegate: delegate)
        #expect(await harness.launch() == .proceed)
        let directory = try TemporaryDirectory(prefix: "testkit-unconfined")
        #expect(FileManager.default.createFile(atPath: directory.path + "/still-writable", contents: Data("x".utf8)))
        try await eventually("the enforcement report") { agent.events.contains { $0.event == "fileExportEnforcement" } }
        let report = agent.events.first { $0.event == "fileExportEnforcement" }?.detail
        #expect(report?["enforcement"]?.stringValue == "advisory")
        #expect(report?["reason"]?.stringValue == "the application does not run under ApplicationMain (an in-process test harness)")
    }

    @Test func versionBelowTheMinimumIsBlocked() async throws {
        let agent = try FakeAgent(policy: Self.policy())
        let delegate = RecordingDelegate()
        let harness = PolicyApplicationHarness(agent: agent, appID: "com.example.notes", version: "1.0.0", delegate: delegate)
        let decision = await harness.launch()
        #expect(decision != .proceed)
        let reason = "The app's version is below compliance.minVersion and onViolation is block."
        #expect(delegate.calls == ["complianceDidChange violation \(reason)", "wasBlocked \(reason)"])
        #expect(harness.application.compliance == .violation(reason: reason))
    }

    @Test func theDelegatesPolicyAnswerAndKeyedFeedbackWithDataReachTheAgent() async throws {
        let agent = try FakeAgent(policy: Self.policy())
        let delegate = RecordingDelegate()
        delegate.policyAnswer = .unsupported(reason: "no sync window")
        let harness = PolicyApplicationHarness(agent: agent, appID: "com.example.notes", version: "2.0.0", delegate: delegate)
        #expect(await harness.launch() == .proceed)
        harness.application.reportFeedback(key: "sync", severity: .info, message: "3 notes synced", data: ["notes": 3])
        try await eventually("the acknowledgement and the feedback") { agent.feedback.count == 2 }
        let policy = try #require(agent.feedback.first { $0.key == "policy" })
        #expect(policy.severity == "error" && policy.message == "policy 1 unsupported: no sync window")
        #expect(policy.data == ["version": "1", "result": "unsupported"])
        #expect(agent.feedback.first { $0.key == "sync" }?.data == ["notes": 3])
    }

    @Test func warningIsDeliveredAtLaunchAndOnEveryChange() async throws {
        let agent = try FakeAgent(policy: Self.policy(onViolation: "warn"))
        let delegate = RecordingDelegate()
        let harness = PolicyApplicationHarness(agent: agent, appID: "com.example.notes", version: "1.0.0", delegate: delegate)
        #expect(await harness.launch() == .proceed)
        let reason = "The app's version is below compliance.minVersion; onViolation is warn, so it may run with a warning."
        #expect(harness.application.compliance == .warning(reason: reason))
        #expect(delegate.calls == ["complianceDidChange warning \(reason)",
                                   "didFinishLaunching serverURL=https://notes.example.com", "didBecomeActive"])

        try await eventually("the subscription") { agent.subscribedSessionCount == 1 }
        try agent.apply(policy: Self.policy(version: "2", minVersion: "1.0.0", onViolation: "warn"))
        try await eventually("compliance restored") { harness.application.compliance == .compliant }
        #expect(delegate.calls.last == "complianceDidChange compliant")
        try agent.apply(policy: Self.policy(version: "3", minVersion: "1.5.0", onViolation: "warn"))
        try await eventually("the new warning") { harness.application.compliance == .warning(reason: reason) }
        #expect(delegate.calls.filter { $0.hasPrefix("complianceDidChange") }.count == 3)
        #expect(!delegate.calls.contains { $0.hasPrefix("wasBlocked") })
    }

    @Test func wipeOrderedByTheTestRemovesTheDeclaredFolder() async throws {
        let home = try TemporaryDirectory()
        let data = home.appending("notes")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        let agent = try FakeAgent(policy: Self.policy())
        let delegate = RecordingDelegate()
        let harness = PolicyApplicationHarness(agent: agent, appID: "com.example.notes", version: "2.0.0",
                                               dataDirectories: [data.path], delegate: delegate)
        // The wipe removes only folders inside the home: make the temporary folder the home.
        let savedHome = ProcessInfo.processInfo.environment["HOME"]
        setenv("HOME", home.path, 1)
        defer { if let savedHome { setenv("HOME", savedHome, 1) } }
        #expect(await harness.launch() == .proceed)
        try await eventually("the subscription") { agent.subscribedSessionCount == 1 }
        let directive = try agent.wipe(appID: "com.example.notes")
        try await eventually("the wipe") { delegate.calls.contains("shouldWipeData \(directive)") }
        try await eventually("the acknowledgement") { agent.acknowledgedWipes == [directive] }
        #expect(!FileManager.default.fileExists(atPath: data.path))
    }

    @Test func cachedRulesHoldWhileTheAgentIsAwayAndTheAppReconnects() async throws {
        let agent = try FakeAgent(policy: Self.policy())
        let delegate = RecordingDelegate()
        let harness = PolicyApplicationHarness(agent: agent, appID: "com.example.notes", version: "2.0.0", delegate: delegate)
        #expect(await harness.launch() == .proceed)
        try await eventually("the subscription") { agent.subscribedSessionCount == 1 }
        agent.stop()
        #expect(DataGuard.shared.canCopy(to: "com.example.mail", length: 10).allowed)
        try agent.start()
        try await eventually("the resubscription") { agent.subscribedSessionCount == 1 }
        try agent.apply(policy: Self.policy(version: "3", syncDays: 1))
        try await eventually("the pushed change") { delegate.calls.last == "managedConfigurationDidChange syncDays=1" }
    }
}
