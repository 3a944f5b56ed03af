import Foundation
import JSONCore
import Testing
import TestSupport
import Varlink

/// PolicyApplication against the real proctord: the test app (run as PolicyApplication by its
/// Info.plist) registers with a daemon started on temporary directories.
@Suite(.serialized) struct PolicyApplicationTests {
    static let appID = "io.proctor.test.kit"

    /// `compliance` adds to the main app's compliance block (`minVersion`, `onViolation`).
    static func policy(appID: String = appID, version: String = "kit.1",
                       config: JSONValue = ["serverURL": "https://notes.example.com", "syncDays": 14],
                       offlineGraceSeconds: Int = 86_400, compliance: [String: JSONValue] = [:]) throws -> JSONValue {
        let match: JSONValue = ["executable": .string(try PolicyTestApp.executablePath()), "users": ["*"]]
        return [
            "schema": 1, "version": .string(version),
            "defaults": ["dlp": ["print": "block"]],
            "apps": [
                appID: [
                    "state": "authorized", "match": match, "config": config,
                    "dlp": [
                        "clipboard": ["level": "managed", "charLimit": 5],
                        "share": ["send": "managed", "receive": "any", "exempt": ["org.partner.*"]],
                        "screenCapture": "allow",
                        "notifications": "block-org-data",
                        "fileExport": ["allow": ["/home/*/Documents/Work/**"], "deny": ["/home/*/Documents/Work/Public/**"]],
                    ],
                    "compliance": .object(compliance.merging(["offlineGraceSeconds": .number(offlineGraceSeconds)]) { mine, _ in mine }),
                ],
                "io.proctor.test.kit-blocked": ["state": "blocked", "match": match],
                "io.proctor.test.kit-retired": ["state": "retired", "match": match],
                "io.proctor.test.kit-old": ["state": "authorized", "match": match,
                                            "compliance": ["minVersion": "2.0.0", "onViolation": "block"]],
                "com.example.mail": ["state": "authorized", "match": ["executable": "/usr/bin/false"]],
                "com.example.gone": ["state": "blocked"],
            ],
        ]
    }

    // MARK: Launch gating

    @Test func blockedAppNeverReachesDidFinishLaunching() throws {
        let daemon = try RunningDaemon(policy: Self.policy())
        let app = try PolicyTestApp.launch(appID: "io.proctor.test.kit-blocked", daemon: daemon)
        #expect(try app.waitForExit() == 77)
        #expect(app.outputLines == ["delegate wasBlocked reason=the administrator blocked io.proctor.test.kit-blocked"])
    }

    @Test func launchBelowTheMinimumVersionIsBlocked() throws {
        let daemon = try RunningDaemon(policy: Self.policy())
        let app = try PolicyTestApp.launch(appID: "io.proctor.test.kit-old", version: "1.9.9", daemon: daemon)
        #expect(try app.waitForExit() == 77)
        let reason = "The app's version is below compliance.minVersion and onViolation is block."
        #expect(app.outputLines == ["delegate complianceDidChange violation reason=\(reason)", "delegate wasBlocked reason=\(reason)"])
        #expect(!app.output.contains("didFinishLaunching"))
    }

    @Test func anAppThatCannotRegisterFailsClosed() throws {
        let daemon = try RunningDaemon(policy: Self.policy())
        let unknown = try PolicyTestApp.launch(appID: "io.proctor.test.not-in-policy", daemon: daemon)
        #expect(try unknown.waitForExit() == 77)
        #expect(unknown.outputLines == ["delegate wasBlocked reason=cannot register as io.proctor.test.not-in-policy with proctord "
                                        + "(at \(daemon.agentSocket)): the app id is not in proctord's policy"])

        let nowhere = try PolicyTestApp.launch(appID: Self.appID, daemon: daemon,
                                               environment: ["PROCTOR_AGENT_SOCKET": daemon.root.appending("absent.sock").path])
        // Not reaching proctord is not a policy verdict: agentUnavailable, and the delegate is not told it was blocked.
        #expect(try nowhere.waitForExit() == 69)
        #expect(nowhere.outputLines.isEmpty)
        #expect(nowhere.errorOutput.contains("launch refused: proctord could not be reached at \(daemon.root.appending("absent.sock").path)"))
    }

    @Test func authorizedAppLaunchesWithItsManagedConfiguration() throws {
        let daemon = try RunningDaemon(policy: Self.policy())
        let app = try PolicyTestApp.launch(appID: Self.appID, daemon: daemon, environment: ["TESTAPP_PRINT_CONFIG": "1"])
        let lines = try app.waitForOutputLines(count: 3)
        #expect(lines == [TestApp.launchLine("ProctorKit.PolicyApplication"),
                          #"config {"serverURL":"https://notes.example.com","syncDays":14}"#,
                          "delegate didBecomeActive"])
        // Lifecycle events reach proctord in the delegate's order.
        try eventually("proctord records didBecomeActive") {
            try daemon.admin("GetApp", ["appId": .string(Self.appID)])["app"]?["lastEvent"]?["event"]?.stringValue == "didBecomeActive"
        }
        #expect(try app.terminate() == 0)
        try eventually("proctord records willTerminate") {
            try daemon.admin("GetApp", ["appId": .string(Self.appID)])["app"]?["lastEvent"]?["event"]?.stringValue == "willTerminate"
        }
    }

    /// Regression: didEnterBackground reached proctord only after SIGCONT, because the process
    /// stopped before the reporter's thread sent it.
    @Test func backgroundIsReportedBeforeTheProcessStops() throws {
        let daemon = try RunningDaemon(policy: Self.policy())
        let app = try PolicyTestApp.launch(appID: Self.appID, daemon: daemon)
        try waitForLine(in: app) { $0 == "delegate didBecomeActive" }
        try app.send(SIGTSTP)
        try app.waitForSchedulerState("T")
        let lastLifecycleEvent = { () throws -> JSONValue? in
            try daemon.admin("EventHistory", ["filter": ["appId": .string(Self.appID), "kinds": ["lifecycle"]], "limit": 1])["events"]?
                .arrayValue?.last
        }
        let event = try #require(try lastLifecycleEvent())
        #expect(event["data"]?["event"]?.stringValue == "didEnterBackground")
        #expect(try app.schedulerState() == "T")
        // The app's own time: no later than when proctord received it.
        let occurred = try #require(event["occurredAt"]?.stringValue), received = try #require(event["receivedAt"]?.stringValue)
        #expect(occurred <= received)
        try app.send(SIGCONT)
        try eventually("proctord records the return to the foreground") {
            try lastLifecycleEvent()?["data"]?["event"]?.stringValue == "didBecomeActive"
        }
        #expect(try app.terminate() == 0)
    }

    // MARK: Wipes

    @Test func retiredAppWipesItsDeclaredDirectoryAndOnlyThat() throws {
        let daemon = try RunningDaemon(policy: Self.policy())
        let home = daemon.root.appending("home")
        let declared = home.appendingPathComponent("kit-data")
        let kept = home.appendingPathComponent("kept")
        let outside = daemon.root.appending("outside/data")
        for folder in [declared, kept, outside] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data("note".utf8).write(to: folder.appendingPathComponent("note.txt"))
        }
        let app = try PolicyTestApp.launch(appID: "io.proctor.test.kit-retired",
                                           dataDirectories: ["~/kit-data", outside.path, "~/../outside/data"],
                                           daemon: daemon, home: home.path)
        #expect(try app.waitForExit() == 77)
        #expect(app.outputLines == ["delegate shouldWipeData directive=retired",
                                    "delegate wasBlocked reason=io.proctor.test.kit-retired is retired; its managed data was wiped"])
        #expect(!FileManager.default.fileExists(atPath: declared.path))
        #expect(FileManager.default.fileExists(atPath: kept.appendingPathComponent("note.txt").path))
        #expect(FileManager.default.fileExists(atPath: outside.appendingPathComponent("note.txt").path))
        #expect(app.errorOutput.contains("refusing to wipe \(outside.path): outside the user's home"))
        #expect(app.errorOutput.contains("refusing to wipe ~/../outside/data: outside the user's home"))
        // The refusal is reported to the administrator.
        let feedback = try daemon.admin("GetApp", ["appId": "io.proctor.test.kit-retired"])["app"]?["feedback"]?.arrayValue ?? []
        let wipe = feedback.first { $0["key"]?.stringValue == "wipe" }
        #expect(wipe?["severity"]?.stringValue == "error")
    }

    @Test func administratorsWipeReachesTheRunningAppAndIsAcknowledged() throws {
        let daemon = try RunningDaemon(policy: Self.policy())
        let home = daemon.root.appending("home")
        let declared = home.appendingPathComponent("kit-data")
        try FileManager.default.createDirectory(at: declared, withIntermediateDirectories: true)
        let app = try PolicyTestApp.launch(appID: Self.appID, dataDirectories: ["~/kit-data"], daemon: daemon, home: home.path)
        try app.waitForOutputLine("delegate didBecomeActive")
        let directive = try #require(try daemon.admin("Wipe", ["appId": .string(Self.appID)])["directiveId"]?.stringValue)
        try app.waitForOutputLine("delegate shouldWipeData directive=\(directive)")
        try eventually("the wipe is acknowledged") {
            let wipes = try daemon.admin("GetApp", ["appId": .string(Self.appID)])["app"]?["wipes"]?.arrayValue ?? []
            return wipes.contains { $0["id"]?.stringValue == directive && $0["state"]?.stringValue == "completed" }
        }
        #expect(!FileManager.default.fileExists(atPath: declared.path))
        #expect(try app.terminate() == 0)
    }

    // MARK: Pushes

    @Test func appliedConfigurationChangeReachesTheRunningDelegate() throws {
        let daemon = try RunningDaemon(policy: Self.policy())
        let app = try PolicyTestApp.launch(appID: Self.appID, daemon: daemon)
        try app.waitForOutputLine("delegate didBecomeActive")

        let changed: JSONValue = ["serverURL": "https://notes.example.com", "syncDays": 30, "theme": "dark"]
        let start = ContinuousClock.now
        _ = try daemon.admin("ApplyPolicy", ["policy": try Self.policy(version: "kit.2", config: changed)])
        let line = try waitForLine(in: app) { $0.hasPrefix("delegate managedConfigurationDidChange config=") }
        let latency = ContinuousClock.now - start
        let received = try JSONParser.parse(String(line.dropFirst("delegate managedConfigurationDidChange config=".count)))
        #expect(received == changed)
        #expect(latency < .seconds(2), "push latency \(latency)")

        // The SDK acknowledges the policy version it applied.
        try eventually("proctord records the acknowledgement of kit.2") {
            let acknowledgements = try daemon.admin("GetApp", ["appId": .string(Self.appID)])["app"]?["acknowledgements"]?.arrayValue ?? []
            return acknowledgements.contains { $0["policyVersion"]?.stringValue == "kit.2" && $0["status"]?.stringValue == "applied" }
        }

        _ = try daemon.admin("Notify", ["appId": .string(Self.appID), "payload": ["command": "sync"]])
        try app.waitForOutputLine(#"delegate didReceiveRemoteNotification {"command":"sync"}"#)
        #expect(try app.terminate() == 0)
    }

    // MARK: DataGuard

    static let dataCases: [JSONValue] = [
        ["action": "clipboard.copy", "target": "com.example.mail", "size": 100],
        ["action": "clipboard.copy", "target": "org.unknown.editor", "size": 100],
        ["action": "clipboard.copy", "target": "org.unknown.editor", "size": 5],
        ["action": "clipboard.copy", "target": "org.unknown.editor", "size": 6],
        ["action": "clipboard.copy", "target": "com.example.gone", "size": 10],
        ["action": "clipboard.copy", "target": .string(appID), "size": 1000],
        ["action": "clipboard.paste", "target": "com.example.mail"],
        ["action": "clipboard.paste", "target": "org.unknown.editor"],
        ["action": "share.send", "target": "com.example.mail"],
        ["action": "share.send", "target": "org.partner.viewer"],
        ["action": "share.send", "target": "org.unknown.editor"],
        ["action": "share.receive", "target": "org.unknown.editor"],
        ["action": "print"],
        ["action": "screen-capture"],
        ["action": "notification", "target": "org"],
        ["action": "notification", "target": "plain"],
        ["action": "file.export", "target": "/home/ann/Documents/Work/report.txt"],
        ["action": "file.export", "target": "/home/ann/Documents/Work/Public/report.txt"],
        ["action": "file.export", "target": "/home/ann/.ssh/id_ed25519"],
        ["action": "file.export", "target": "/home/ann/Documents/Work/../../.ssh/id_ed25519"],
    ]

    static var dataCasesEnvironment: [String: String?] {
        ["TESTAPP_DATAGUARD_CASES": JSONValue.array(dataCases).serializedString()]
    }

    /// What the daemon's Decide says for each case.
    static func daemonAnswers(_ daemon: RunningDaemon) throws -> [Bool] {
        try dataCases.map { entry in
            var parameters: [String: JSONValue] = ["appId": .string(appID), "action": entry["action"]!]
            if let target = entry["target"] { parameters["target"] = target }
            if let size = entry["size"] { parameters["size"] = size }
            return try #require(try daemon.admin("Decide", parameters)["allowed"]?.boolValue)
        }
    }

    @Test func dataGuardAnswersEqualTheDaemonsDecide() throws {
        let daemon = try RunningDaemon(policy: Self.policy())
        let events = try VarlinkClient(path: daemon.adminSocket, timeout: .seconds(10))
        var stream = try events.callMore("io.proctor.Admin.Events",
                                         ["filter": ["appId": .string(Self.appID), "kinds": ["lifecycle", "denial"]]])
        let app = try PolicyTestApp.launch(appID: Self.appID, daemon: daemon, environment: Self.dataCasesEnvironment)
        let answers = try dataGuardAnswers(of: app, round: 1)
        let expected = try Self.daemonAnswers(daemon)
        #expect(answers.map(\.allowed) == expected)
        #expect(expected.contains(true) && expected.contains(false))

        // Lifecycle events and each denial reach proctord in the order the delegate saw them.
        let denials = expected.filter { !$0 }.count
        var reported: [String] = []
        var kinds: [String] = []
        while reported.count < denials + 2, let reply = try stream.next() {
            reported.append(reply["event"]?["data"]?["event"]?.stringValue ?? "?")
            kinds.append(reply["event"]?["kind"]?.stringValue ?? "?")
        }
        #expect(reported == ["didFinishLaunching"] + Array(repeating: "dataActionDenied", count: denials) + ["didBecomeActive"])
        // A denial is not a lifecycle event: it has a kind of its own.
        #expect(kinds == ["lifecycle"] + Array(repeating: "denial", count: denials) + ["lifecycle"])
        #expect(try app.terminate() == 0)
    }

    /// The offline grace, without a race against the clock: the app's grace starts when its
    /// subscription sees proctord go (`DataGuard.connectionLost`), and an answer is the cached
    /// rule's only while less than the grace has passed since. With a grace of seconds, the test
    /// had those seconds to see the loss, signal the app and have it answer: a loaded machine
    /// took longer, and the cached answers came back as `sdk.offlineGrace` denials. So the rules
    /// stay in force under a grace no test run outlasts (a day), and the expiry is shown under
    /// one second of grace after waiting longer than that from the moment the loss was seen:
    /// only a lower bound on elapsed time, which a slow machine cannot break.
    @Test func appKeepsEnforcingAcrossADaemonRestartAndReconnects() throws {
        let daemon = try RunningDaemon(policy: Self.policy())
        let app = try PolicyTestApp.launch(appID: Self.appID, daemon: daemon, environment: Self.dataCasesEnvironment)
        let online = try dataGuardAnswers(of: app, round: 1)
        #expect(online.map(\.allowed) == (try Self.daemonAnswers(daemon)))

        try daemon.kill()
        try waitForLine(in: app, errorOutput: true, occurrence: 1) { $0.contains("lost proctord") }
        try app.send(SIGHUP)
        #expect(try dataGuardAnswers(of: app, round: 2) == online, "within the grace period the cached rules stay in force")

        try daemon.start()
        try waitForLine(in: app, errorOutput: true, occurrence: 1) { $0.contains("reconnected to proctord") }
        let grace = 1
        let shortGrace: JSONValue = ["serverURL": "https://notes.example.com", "syncDays": 10]
        _ = try daemon.admin("ApplyPolicy", ["policy": try Self.policy(version: "kit.2", config: shortGrace, offlineGraceSeconds: grace)])
        try waitForLine(in: app) { $0 == #"delegate managedConfigurationDidChange config={"serverURL":"https://notes.example.com","syncDays":10}"# }
        try daemon.kill()
        try waitForLine(in: app, errorOutput: true, occurrence: 2) { $0.contains("lost proctord") }
        // The grace began at the latest when the loss was seen: past it by the time the app answers.
        Thread.sleep(forTimeInterval: Double(grace) + 0.3)
        try app.send(SIGHUP)
        let expired = try dataGuardAnswers(of: app, round: 3)
        #expect(expired.allSatisfy { !$0.allowed && $0.rule == "sdk.offlineGrace" })

        try daemon.start()
        try waitForLine(in: app, errorOutput: true, occurrence: 2) { $0.contains("reconnected to proctord") }
        let changed: JSONValue = ["serverURL": "https://notes.example.com", "syncDays": 7]
        _ = try daemon.admin("ApplyPolicy", ["policy": try Self.policy(version: "kit.3", config: changed)])
        try waitForLine(in: app) { $0 == #"delegate managedConfigurationDidChange config={"serverURL":"https://notes.example.com","syncDays":7}"# }
        try app.send(SIGHUP)
        let again = try dataGuardAnswers(of: app, round: 4)
        #expect(again == online)
        #expect(try app.terminate() == 0)
    }

    // MARK: Helpers

    struct Answer: Equatable {
        let allowed: Bool
        let rule: String
    }

    /// The `round`-th block of DataGuard answers the test app logged.
    func dataGuardAnswers(of app: ChildProcess, round: Int) throws -> [Answer] {
        let count = Self.dataCases.count
        var lines: [String] = []
        try eventually("\(round) rounds of DataGuard answers") {
            lines = app.outputLines.filter { $0.hasPrefix("dataguard ") }
            return lines.count >= round * count
        }
        return lines[((round - 1) * count)..<(round * count)].enumerated().map { index, line in
            let fields = line.split(separator: " ")
            #expect(fields.count == 4 && fields[1] == "\(index)", "\(line)")
            return Answer(allowed: fields.count > 2 && fields[2] == "allowed=true",
                          rule: fields.count > 3 ? String(fields[3].dropFirst("rule=".count)) : "")
        }
    }

    /// The `occurrence`-th line of the app's output (or error output) that `matches`, once there.
    @discardableResult
    func waitForLine(in app: ChildProcess, errorOutput: Bool = false, occurrence: Int = 1, timeout: Duration = .seconds(15),
                     where matches: (String) -> Bool) throws -> String {
        var found: String?
        try eventually("\(occurrence) matching line(s)", timeout: timeout) {
            let lines = errorOutput ? app.errorOutput.split(separator: "\n").map(String.init) : app.outputLines
            let matching = lines.filter(matches)
            found = matching.count >= occurrence ? matching[occurrence - 1] : nil
            return found != nil
        }
        return found!
    }

    /// Polls `condition` every 20 ms until it holds; throws after `timeout`.
    func eventually(_ what: String, timeout: Duration = .seconds(15), _ condition: () throws -> Bool) throws {
        let deadline = ContinuousClock.now + timeout
        while try !condition() {
            guard ContinuousClock.now < deadline else { throw TestSupportError("timed out waiting for \(what)") }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }
}
