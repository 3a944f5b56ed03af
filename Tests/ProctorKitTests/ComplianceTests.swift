import Foundation
import JSONCore
import Testing
import TestSupport

/// Compliance that holds while the app runs: proctord decides `launch` again for every
/// running session on each policy change and pushes the verdict; the test app (a real
/// PolicyApplication process) acts on it. Part of PolicyApplicationTests' serialized suite.
extension PolicyApplicationTests {
    static let belowMinimum = "The app's version is below compliance.minVersion"

    /// Launches the main test app at 1.0.0 (with `dataDirectories`) and waits until it runs.
    func launchRunningApp(_ daemon: RunningDaemon, dataDirectories: [String] = [], home: URL? = nil) throws -> ChildProcess {
        let app = try PolicyTestApp.launch(appID: Self.appID, version: "1.0.0", dataDirectories: dataDirectories,
                                           daemon: daemon, home: home?.path)
        try app.waitForOutputLine("delegate didBecomeActive")
        return app
    }

    /// Applies `compliance` for the main app and returns how long after the apply returned
    /// the app logged `line` (waited for generously; the bound is checked by callers).
    func apply(_ compliance: [String: JSONValue], version: String, to daemon: RunningDaemon, thenWaitIn app: ChildProcess,
               for line: @escaping (String) -> Bool) throws -> Duration {
        _ = try daemon.admin("ApplyPolicy", ["policy": try Self.policy(version: version, compliance: compliance)])
        let applied = ContinuousClock.now
        try waitForLine(in: app, timeout: .seconds(20), where: line)
        return ContinuousClock.now - applied
    }

    @Test func runningAppIsBlockedWhenMinVersionIsRaised() throws {
        let daemon = try RunningDaemon(policy: Self.policy())
        let app = try launchRunningApp(daemon)
        let latency = try apply(["minVersion": "2.0.0", "onViolation": "block"], version: "kit.2", to: daemon, thenWaitIn: app) {
            $0.hasPrefix("delegate wasBlocked")
        }
        #expect(latency <= .seconds(1), "blocked \(latency) after the apply")
        #expect(try app.waitForExit() == 77)
        let reason = "\(Self.belowMinimum) and onViolation is block."
        #expect(Array(app.outputLines.suffix(2)) == ["delegate complianceDidChange violation reason=\(reason)",
                                                     "delegate wasBlocked reason=\(reason)"])
        #expect(app.errorOutput.contains("blocked by policy: \(reason)"))
    }

    @Test func wipeOnViolationAtLaunchWipesThenBlocks() throws {
        let daemon = try RunningDaemon(policy: Self.policy(compliance: ["minVersion": "2.0.0", "onViolation": "wipe"]))
        let home = daemon.root.appending("home")
        let declared = home.appendingPathComponent("kit-data")
        try FileManager.default.createDirectory(at: declared, withIntermediateDirectories: true)
        try Data("note".utf8).write(to: declared.appendingPathComponent("note.txt"))
        let app = try PolicyTestApp.launch(appID: Self.appID, version: "1.0.0", dataDirectories: ["~/kit-data"],
                                           daemon: daemon, home: home.path)
        #expect(try app.waitForExit() == 77)
        let reason = "\(Self.belowMinimum) and onViolation is wipe, so its data must be wiped."
        #expect(app.outputLines == ["delegate complianceDidChange violation reason=\(reason)",
                                    "delegate shouldWipeData directive=complianceViolation",
                                    "delegate wasBlocked reason=\(reason)"])
        #expect(!FileManager.default.fileExists(atPath: declared.path))
        try eventually("the wipe is reported as feedback") {
            let feedback = try daemon.admin("GetApp", ["appId": .string(Self.appID)])["app"]?["feedback"]?.arrayValue ?? []
            return feedback.contains { $0["key"]?.stringValue == "wipe" && $0["message"]?.stringValue?.hasPrefix("compliance violation: ") == true }
        }
    }

    @Test func wipeOnViolationWhileRunningWipesThenBlocks() throws {
        let daemon = try RunningDaemon(policy: Self.policy())
        let home = daemon.root.appending("home")
        let declared = home.appendingPathComponent("kit-data")
        try FileManager.default.createDirectory(at: declared, withIntermediateDirectories: true)
        let app = try launchRunningApp(daemon, dataDirectories: ["~/kit-data"], home: home)
        let latency = try apply(["minVersion": "2.0.0", "onViolation": "wipe"], version: "kit.2", to: daemon, thenWaitIn: app) {
            $0.hasPrefix("delegate wasBlocked")
        }
        #expect(latency <= .seconds(1), "blocked \(latency) after the apply")
        #expect(try app.waitForExit() == 77)
        let reason = "\(Self.belowMinimum) and onViolation is wipe, so its data must be wiped."
        #expect(Array(app.outputLines.suffix(3)) == ["delegate complianceDidChange violation reason=\(reason)",
                                                     "delegate shouldWipeData directive=complianceViolation",
                                                     "delegate wasBlocked reason=\(reason)"])
        #expect(!FileManager.default.fileExists(atPath: declared.path))
    }

    @Test func warnIsDeliveredAndTheAppKeepsRunning() throws {
        let daemon = try RunningDaemon(policy: Self.policy())
        let app = try launchRunningApp(daemon)
        let warning = "delegate complianceDidChange warning reason=\(Self.belowMinimum); onViolation is warn, so it may run with a warning."
        let latency = try apply(["minVersion": "2.0.0", "onViolation": "warn"], version: "kit.2", to: daemon, thenWaitIn: app) {
            $0 == warning
        }
        #expect(latency <= .seconds(1), "warned \(latency) after the apply")
        // Lowering the minimum again makes it compliant, and it is told so.
        _ = try apply(["minVersion": "1.0.0", "onViolation": "warn"], version: "kit.3", to: daemon, thenWaitIn: app) {
            $0 == "delegate complianceDidChange compliant"
        }
        #expect(try app.schedulerState() != "Z")
        #expect(try app.terminate() == 0)
        #expect(!app.output.contains("wasBlocked"))
    }

    @Test func warnAtLaunchIsToldBeforeDidFinishLaunching() throws {
        let daemon = try RunningDaemon(policy: Self.policy(compliance: ["minVersion": "2.0.0", "onViolation": "warn"]))
        let app = try PolicyTestApp.launch(appID: Self.appID, version: "1.0.0", daemon: daemon)
        let lines = try app.waitForOutputLines(count: 3)
        #expect(lines == ["delegate complianceDidChange warning reason=\(Self.belowMinimum); onViolation is warn, so it may run with a warning.",
                          TestApp.launchLine("ProctorKit.PolicyApplication"), "delegate didBecomeActive"])
        #expect(try app.terminate() == 0)
    }
}
