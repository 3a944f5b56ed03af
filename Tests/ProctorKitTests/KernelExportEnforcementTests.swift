import Foundation
import JSONCore
import Testing
import TestSupport

/// `dlp.fileExport.enforcement: "kernel"` in a real app process against the real proctord and the
/// build machine's kernel (Landlock ABI 7): the app's own code, on the main thread and on a
/// Dispatch worker that ran before the restriction, gets EACCES outside the allowed places.
@Suite(.serialized) struct KernelExportEnforcementTests {
    /// Not PolicyApplicationTests' app: that suite runs beside this one and checks that its
    /// app's data key is gone from this user's keyring after a wipe.
    static let appID = "io.proctor.test.kit.landlock"

    /// A policy whose app may export beneath `allow` (patterns under the test's root, where the
    /// app's home is `root/home`), enforced by `enforcement`.
    static func policy(version: String, allow: [String], enforcement: String = "kernel") throws -> JSONValue {
        let match: JSONValue = ["executable": .string(try PolicyTestApp.executablePath()), "users": ["*"]]
        return ["schema": 1, "version": .string(version),
                "apps": [appID: ["state": "authorized", "match": match,
                                 "dlp": ["fileExport": ["allow": .array(allow.map(JSONValue.string)),
                                                        "enforcement": .string(enforcement)]]]]]
    }

    struct Places {
        let root: String
        var home: String { root + "/home" }
        /// Allowed through the pattern `root/*/Export/**`, resolved for this user's home.
        var export: String { home + "/Export" }
        var shared: String { home + "/Shared" }
        var other: String { home + "/Other" }
        var outside: String { root + "/outside" }
        var data: String { home + "/kit-data" }

        init(_ daemon: RunningDaemon) throws {
            root = daemon.root.path
            for directory in [export, shared, other, outside] {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            }
        }

        func pattern(_ folder: String) -> String { root + "/*/\(folder)/**" }
    }

    func launch(_ daemon: RunningDaemon, _ places: Places, writing files: [String]) throws -> ChildProcess {
        try PolicyTestApp.launch(appID: Self.appID, dataDirectories: ["~/kit-data"], daemon: daemon, home: places.home,
                                 environment: ["TESTAPP_WRITE_PATHS": JSONValue.array(files.map(JSONValue.string)).serializedString()])
    }

    /// The `write` lines of the last round of attempts (at launch, or after SIGHUP).
    func writes(_ app: ChildProcess, count: Int, round: Int) throws -> [String] {
        try PolicyApplicationTests().eventually("\(count * round) write lines") { app.outputLines.filter { $0.hasPrefix("write ") }.count >= count * round }
        return Array(app.outputLines.filter { $0.hasPrefix("write ") }.suffix(count))
    }

    @Test func anAppLaunchedOfflineFromItsSignedViewIsConfinedToo() throws {
        let daemon = try RunningDaemon(policy: ["schema": 1, "version": "ll.0", "apps": [:]])
        let places = try Places(daemon)
        _ = try daemon.admin("ApplyPolicy", ["policy": try Self.policy(version: "ll.1", allow: [places.pattern("Export")])])
        let online = try launch(daemon, places, writing: [])
        try online.waitForOutputLine("delegate didBecomeActive")
        #expect(try online.terminate() == 0)
        try daemon.kill()

        let files = [places.export + "/offline.txt", places.outside + "/leak.txt"]
        let app = try launch(daemon, places, writing: files)
        try app.waitForOutputLine("delegate didBecomeActive")
        #expect(try writes(app, count: files.count, round: 1) == [
            "write \(places.export)/offline.txt main=ok worker=ok",
            "write \(places.outside)/leak.txt main=errno=13 worker=errno=13",
        ], "\(app.errorOutput)")
        _ = try PolicyApplicationTests().waitForLine(in: app, errorOutput: true) { $0.contains("launching offline") }
        try app.terminate()
    }

    @Test func writesOutsideTheAllowedPlacesGetEACCESFromTheKernelInsideSucceed() throws {
        let daemon = try RunningDaemon(policy: ["schema": 1, "version": "ll.0", "apps": [:]])
        let places = try Places(daemon)
        _ = try daemon.admin("ApplyPolicy", ["policy": try Self.policy(version: "ll.1", allow: [places.pattern("Export")])])
        let files = [places.export + "/report.txt", places.data + "/cache", places.outside + "/leak.txt", places.shared + "/leak.txt",
                     "/dev/null"]
        let app = try launch(daemon, places, writing: files)
        try app.waitForOutputLine("delegate didBecomeActive")
        #expect(try writes(app, count: files.count, round: 1) == [
            "write \(places.export)/report.txt main=ok worker=ok",
            "write \(places.data)/cache main=ok worker=ok",
            "write \(places.outside)/leak.txt main=errno=13 worker=errno=13",
            "write \(places.shared)/leak.txt main=errno=13 worker=errno=13",
            "write /dev/null main=ok worker=ok",
        ], "\(app.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: places.outside + "/leak.txt"))

        // proctord knows the kernel enforces the rule for this session.
        try PolicyApplicationTests().eventually("proctord shows the session's enforcement") {
            // The SDK reports on a session of its own (EventReporter), with the app's pid.
            let sessions = try daemon.admin("GetApp", ["appId": .string(Self.appID)])["app"]?["sessions"]?.arrayValue ?? []
            return sessions.contains { session in
                session["fileExportEnforcement"]?["mode"]?.stringValue == "kernel"
                    && session["fileExportEnforcement"]?["landlockABI"]?.intValue ?? 0 >= 3
                    && session["pid"]?.intValue == Int(app.pid)
            }
        }
        #expect(try app.terminate() == 0)
    }

    @Test func aTighteningPushTakesEffectLiveALooseningOneAsksForARestart() throws {
        let daemon = try RunningDaemon(policy: ["schema": 1, "version": "ll.0", "apps": [:]])
        let places = try Places(daemon)
        _ = try daemon.admin("ApplyPolicy", ["policy": try Self.policy(version: "ll.1", allow: [places.pattern("Export"), places.pattern("Shared")])])
        let files = [places.export + "/a", places.shared + "/b", places.other + "/c"]
        let app = try launch(daemon, places, writing: files)
        try app.waitForOutputLine("delegate didBecomeActive")
        #expect(try writes(app, count: 3, round: 1) == ["write \(places.export)/a main=ok worker=ok",
                                                        "write \(places.shared)/b main=ok worker=ok",
                                                        "write \(places.other)/c main=errno=13 worker=errno=13"], "\(app.errorOutput)")

        // Tighter: Shared is no longer allowed, without a restart.
        try push(daemon, version: "ll.2", allow: [places.pattern("Export")])
        try app.send(SIGHUP)
        #expect(try writes(app, count: 3, round: 2) == ["write \(places.export)/a main=ok worker=ok",
                                                        "write \(places.shared)/b main=errno=13 worker=errno=13",
                                                        "write \(places.other)/c main=errno=13 worker=errno=13"], "\(app.errorOutput)")

        // Looser: Other is allowed by the rule, but the kernel keeps refusing it until a restart,
        // and the delegate is told; Shared stays refused too.
        try push(daemon, version: "ll.3", allow: [places.pattern("Export"), places.pattern("Shared"), places.pattern("Other")])
        try app.waitForOutputLine("delegate shouldRestart reason=the export rule now allows writing to \(places.shared), \(places.other), "
                                  + "which the kernel keeps refusing until the app restarts")
        try app.send(SIGHUP)
        #expect(try writes(app, count: 3, round: 3) == ["write \(places.export)/a main=ok worker=ok",
                                                        "write \(places.shared)/b main=errno=13 worker=errno=13",
                                                        "write \(places.other)/c main=errno=13 worker=errno=13"], "\(app.errorOutput)")

        // Advisory again: a restart too.
        try push(daemon, version: "ll.4", allow: [places.pattern("Export")], enforcement: "advisory")
        try app.waitForOutputLine("delegate shouldRestart reason=the export rule is no longer enforced by the kernel; "
                                  + "the kernel keeps confining writes until the app restarts")
        #expect(try app.terminate() == 0)

        // The next launch runs under the rule in force: advisory, so nothing is confined.
        let relaunched = try launch(daemon, places, writing: [places.other + "/c"])
        try relaunched.waitForOutputLine("delegate didBecomeActive")
        #expect(try writes(relaunched, count: 1, round: 1) == ["write \(places.other)/c main=ok worker=ok"])
        #expect(try relaunched.terminate() == 0)
    }

    /// The kernel names directories by bytes: "Café" composed and decomposed are two of them. A
    /// rule moved from one spelling to the other allows another directory: the kernel intersects
    /// the layers, so the old one is refused at once and the new one waits for a restart.
    @Test func aRuleMovedToAnotherUnicodeFormOfItsDirectoryIsAnotherDirectory() throws {
        let daemon = try RunningDaemon(policy: ["schema": 1, "version": "ll.0", "apps": [:]])
        let places = try Places(daemon)
        let (composed, decomposed) = ("Caf\u{E9}", "Cafe\u{301}")
        for folder in [composed, decomposed] {
            try FileManager.default.createDirectory(atPath: places.home + "/" + folder, withIntermediateDirectories: true)
        }
        _ = try daemon.admin("ApplyPolicy", ["policy": try Self.policy(version: "ll.1", allow: [places.pattern(composed)])])
        let files = [places.home + "/\(composed)/a", places.home + "/\(decomposed)/b"]
        let app = try launch(daemon, places, writing: files)
        try app.waitForOutputLine("delegate didBecomeActive")
        #expect(try writes(app, count: 2, round: 1).map { $0.hasSuffix("main=ok worker=ok") } == [true, false], "\(app.errorOutput)")

        try push(daemon, version: "ll.2", allow: [places.pattern(decomposed)])
        let restart = "delegate shouldRestart reason=the export rule now allows writing to \(places.home)/\(decomposed), "
            + "which the kernel keeps refusing until the app restarts"
        #expect(try app.waitForOutputLine(restart).contains { $0.utf8.elementsEqual(restart.utf8) })
        try app.send(SIGHUP)
        #expect(try writes(app, count: 2, round: 2).map { $0.hasSuffix("main=errno=13 worker=errno=13") } == [true, true],
                "\(app.errorOutput)")
        #expect(try app.terminate() == 0)
    }

    /// Landlock keeps at most 16 layers: a tighter rule past that cannot be added, so the app is
    /// asked to restart, and the layers in force go on refusing.
    @Test func aTighteningPastTheKernelsLayerLimitAsksForARestart() throws {
        let daemon = try RunningDaemon(policy: ["schema": 1, "version": "ll.0", "apps": [:]])
        let places = try Places(daemon)
        _ = try daemon.admin("ApplyPolicy", ["policy": try Self.policy(version: "ll.1", allow: [places.pattern("Export")])])
        let app = try launch(daemon, places, writing: [places.outside + "/leak"])
        try app.waitForOutputLine("delegate didBecomeActive")
        var folder = "Export"
        for step in 2...17 where !app.outputLines.contains(where: { $0.hasPrefix("delegate shouldRestart") }) {
            folder += "/\(step)"
            try FileManager.default.createDirectory(atPath: places.home + "/" + folder, withIntermediateDirectories: true)
            try push(daemon, version: "ll.\(step)", allow: [places.pattern(folder)])
        }
        // The app's output is read from a pipe on another thread, so its line can come after
        // proctord already shows the acknowledgement that `push` waited for.
        try PolicyApplicationTests().eventually("the delegate is asked to restart") {
            app.outputLines.contains { $0.hasPrefix("delegate shouldRestart") }
        }
        let line = try #require(app.outputLines.first { $0.hasPrefix("delegate shouldRestart") })
        #expect(line.hasPrefix("delegate shouldRestart reason=the kernel could not add the tighter export rule ("), "\(line)")
        #expect(line.hasSuffix("(errno 7))"), "E2BIG: \(line)")
        try app.send(SIGHUP)
        #expect(try writes(app, count: 1, round: 2) == ["write \(places.outside)/leak main=errno=13 worker=errno=13"])
        #expect(try app.terminate() == 0)
    }

    /// Applies the policy and waits until the app acknowledged it (it is then in force).
    func push(_ daemon: RunningDaemon, version: String, allow: [String], enforcement: String = "kernel") throws {
        _ = try daemon.admin("ApplyPolicy", ["policy": try Self.policy(version: version, allow: allow, enforcement: enforcement)])
        try PolicyApplicationTests().eventually("the app acknowledges \(version)") {
            let acknowledgements = try daemon.admin("GetApp", ["appId": .string(Self.appID)])["app"]?["acknowledgements"]?.arrayValue ?? []
            return acknowledgements.contains { $0["policyVersion"]?.stringValue == version }
        }
    }
}
