import Foundation
import JSONCore
import Testing
import TestSupport

/// Policy acknowledgements answered by the app's delegate, keyed feedback with data and
/// queued commands, between a real app process, the real proctord and `proctorctl`. Part of PolicyApplicationTests'
/// serialized suite.
extension PolicyApplicationTests {
    @Test func theDelegatesAcknowledgementReachesTheAdministrator() throws {
        let daemon = try RunningDaemon(policy: Self.policy())
        let feedback: JSONValue = ["key": "sync", "message": "last sync ok", "data": ["items": 3, "server": "eu-1"]]
        let app = try PolicyTestApp.launch(appID: Self.appID, daemon: daemon,
                                           environment: ["TESTAPP_POLICY_ANSWER": "unsupported:no dark theme",
                                                         "TESTAPP_FEEDBACK": feedback.serializedString()])
        let lines = try app.waitForOutputLine("delegate didBecomeActive")
        // The version in force at launch is answered before didFinishLaunching.
        #expect(Array(lines.prefix(2)) == ["delegate didReceivePolicyChange kit.1", TestApp.launchLine("ProctorKit.PolicyApplication")])
        // A version that changes nothing of this app is not pushed to it; this one does.
        _ = try daemon.admin("ApplyPolicy", ["policy": try Self.policy(version: "kit.2", config: ["theme": "dark"])])
        try app.waitForOutputLine("delegate didReceivePolicyChange kit.2")

        try eventually("proctord stores both acknowledgements and the feedback") {
            let inventory = try daemon.admin("GetApp", ["appId": .string(Self.appID)])["app"]
            let acknowledged = (inventory?["acknowledgements"]?.arrayValue ?? []).map {
                "\($0["policyVersion"]?.stringValue ?? "") \($0["status"]?.stringValue ?? "")"
            }
            let entries = inventory?["feedback"]?.arrayValue ?? []
            return Set(acknowledged) == ["kit.1 unsupported", "kit.2 unsupported"]
                && entries.contains { $0["key"] == "sync" && $0["data"] == feedback["data"] && $0["message"] == "last sync ok" }
                && entries.contains { $0["key"] == "policy" && $0["message"] == "policy kit.2 unsupported: no dark theme" }
        }
        let ctl = try ChildProcess(BuiltProducts.executable("proctorctl"), arguments: ["app", Self.appID],
                                   environment: ["PROCTOR_ADMIN_SOCKET": daemon.adminSocket, "NO_COLOR": "1"])
        #expect(try ctl.waitForExit() == 0)
        let shown = ctl.outputLines.map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }
        #expect(shown.contains { $0.hasPrefix("kit.2 unsupported ") })
        #expect(try app.terminate() == 0)
    }

    @Test func aCommandForAnAppNotRunningReachesItAtItsNextLaunch() throws {
        let daemon = try RunningDaemon(policy: Self.policy())
        let reply = try daemon.admin("Notify", ["appId": .string(Self.appID), "payload": ["command": "sync"]])
        #expect(reply["delivered"] == 0 && reply["queuedUntil"]?.stringValue != nil)
        let app = try PolicyTestApp.launch(appID: Self.appID, daemon: daemon)
        try app.waitForOutputLine(#"delegate didReceiveRemoteNotification {"command":"sync"}"#)
        // After the delegate launched: queued commands come with the subscription.
        #expect(app.outputLines.firstIndex(of: TestApp.launchLine("ProctorKit.PolicyApplication")) == 0)
        #expect(try app.terminate() == 0)
    }
}
