import Foundation
import JSONCore
import ProctorCrypto
import ProctorProtocol
import Testing
import TestSupport

/// Launching without proctord (issue #12 §2), with the real proctord and the test app as a real
/// PolicyApplication process: an offline launch from the view proctord signed, the refusals
/// (exit 69, "could not be reached") for a view that is missing, tampered, for another app or
/// user, signed by another key or too old, and the offline wipe. Part of PolicyApplicationTests'
/// serialized suite.
extension PolicyApplicationTests {
    /// Where the SDK keeps `appID`'s signed view under `home`.
    func cachedViewPath(home: URL, appID: String = Self.appID) -> URL {
        home.appendingPathComponent(".local/state/proctor/\(appID).view")
    }

    /// Launches the app once with proctord up (writing the protected note "online"), ends it,
    /// then kills proctord (SIGKILL: its socket stays, refusing connections).
    func cacheViewThenStopDaemon(_ daemon: RunningDaemon, home: URL) throws {
        let app = try PolicyTestApp.launch(appID: Self.appID, dataDirectories: ["~/kit-data"], daemon: daemon, home: home.path,
                                           environment: ["TESTAPP_PROTECTED_NOTE": "online"])
        try app.waitForOutputLine("delegate didBecomeActive")
        #expect(try app.terminate() == 0)
        #expect(FileManager.default.fileExists(atPath: cachedViewPath(home: home).path))
        try daemon.kill()
    }

    /// The app launched without proctord: its exit status, standard error and output lines.
    func launchOffline(_ daemon: RunningDaemon, home: URL, appID: String = Self.appID) throws -> ChildProcess {
        try PolicyTestApp.launch(appID: appID, dataDirectories: ["~/kit-data"], daemon: daemon, home: home.path,
                                 environment: ["TESTAPP_PROTECTED_NOTE": "offline"])
    }

    /// Expects the app to end with `agentUnavailable` saying proctord could not be reached and `why`.
    func expectAgentUnavailable(_ app: ChildProcess, because why: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        #expect(try app.waitForExit() == 69, sourceLocation: sourceLocation)
        #expect(app.errorOutput.contains("launch refused: proctord could not be reached"), "\(app.errorOutput)",
                sourceLocation: sourceLocation)
        #expect(app.errorOutput.contains(why), "\(app.errorOutput)", sourceLocation: sourceLocation)
        #expect(!app.errorOutput.contains("blocked by policy"), sourceLocation: sourceLocation)
        #expect(!app.output.contains("didFinishLaunching"), sourceLocation: sourceLocation)
    }

    /// The cached view with its payload rewritten by `edit` and signed by `key` (proctord's own
    /// key from its state directory, or another).
    func resign(home: URL, with key: SigningKeyPair, appID: String = Self.appID,
                _ edit: (inout [String: JSONValue]) -> Void) throws {
        let url = cachedViewPath(home: home)
        var document = try #require(try JSONParser.parse(Array(try Data(contentsOf: url))).objectValue)
        let text = try #require(document["payload"]?.stringValue)
        var payload = try #require(try JSONParser.parse(text).objectValue)
        edit(&payload)
        let bytes = JSONValue.object(payload).serialized()
        document["payload"] = .string(String(decoding: bytes, as: UTF8.self))
        document["signature"] = .string(Base64.encode(key.sign(bytes)))
        try Data(JSONValue.object(document).serialized()).write(to: cachedViewPath(home: home, appID: appID))
    }

    func daemonKey(_ daemon: RunningDaemon) throws -> SigningKeyPair {
        try SigningKeyPair.load(privateKeyFrom: daemon.root.appending("state/view-signing-key").path)
    }

    @Test func launchesOfflineFromTheSignedViewWithinTheGraceAndReconnects() throws {
        let daemon = try RunningDaemon(policy: Self.policy())
        let home = daemon.root.appending("home")
        try cacheViewThenStopDaemon(daemon, home: home)

        let app = try launchOffline(daemon, home: home)
        try app.waitForOutputLine("delegate didBecomeActive")
        // The data key came from the kernel keyring's copy: the note written online reads back.
        #expect(app.outputLines.contains("protected before=online"), "\(app.outputLines)")
        // Standard error is read apart from standard output: wait for the line rather than race it.
        try waitForLine(in: app, errorOutput: true, timeout: .seconds(10)) {
            $0.contains("launching offline from the view proctord signed at")
        }

        try daemon.start()
        try waitForLine(in: app, errorOutput: true, timeout: .seconds(20)) { $0.contains("reconnected to proctord") }
        try eventually("the app registered again") {
            let sessions = try daemon.admin("GetApp", ["appId": .string(Self.appID)])["app"]?["sessions"]?.arrayValue ?? []
            return !sessions.isEmpty
        }
        #expect(try app.terminate() == 0)
    }

    /// The `issuedAt` of the cached view, in milliseconds.
    func cachedViewIssuedAt(home: URL) throws -> Int64? {
        guard let data = FileManager.default.contents(atPath: cachedViewPath(home: home).path),
              let payload = try JSONParser.parse(Array(data)).objectValue?["payload"]?.stringValue,
              let issuedAt = try JSONParser.parse(payload).objectValue?["issuedAt"]?.stringValue else { return nil }
        return RFC3339.milliseconds(issuedAt)
    }

    @Test func aRunningAppsCachedViewIsSignedAnewBeforeItAges() throws {
        // A grace of 4 s: proctord signs the subscriber's view anew every 2 s with nothing changed.
        let daemon = try RunningDaemon(policy: Self.policy(offlineGraceSeconds: 4))
        let home = daemon.root.appending("home")
        let app = try PolicyTestApp.launch(appID: Self.appID, daemon: daemon, home: home.path,
                                           environment: ["TESTAPP_POLICY_ANSWER": "applied"])
        try app.waitForOutputLine("delegate didBecomeActive")
        let first = try #require(try cachedViewIssuedAt(home: home))
        try eventually("a view signed anew", timeout: .seconds(10)) { try (cachedViewIssuedAt(home: home) ?? 0) >= first + 1500 }
        #expect(app.outputLines.filter { $0.hasPrefix("delegate didReceivePolicyChange") }.count == 1,
                "a refresh is not a policy change for the delegate: \(app.outputLines)")
        #expect(try app.terminate() == 0)
    }

    @Test func refusesToLaunchOfflineFromAViewThatIsMissingTamperedOrNotItsOwn() throws {
        let daemon = try RunningDaemon(policy: Self.policy())
        let home = daemon.root.appending("home")
        try cacheViewThenStopDaemon(daemon, home: home)
        let view = cachedViewPath(home: home)
        let genuine = try Data(contentsOf: view)
        let key = try daemonKey(daemon)

        // One byte of the payload flipped: the signature no longer verifies.
        var flipped = genuine
        let index = try #require(flipped.firstRange(of: Data("syncDays".utf8))).lowerBound
        flipped[index] ^= 0x20
        try flipped.write(to: view)
        try expectAgentUnavailable(try launchOffline(daemon, home: home), because: "is not signed by proctord's view-signing key")

        // Signed by a key that is not proctord's.
        try genuine.write(to: view)
        try resign(home: home, with: try SigningKeyPair.generate()) { _ in }
        try expectAgentUnavailable(try launchOffline(daemon, home: home), because: "is not signed by proctord's view-signing key")

        // proctord's genuine view, but for another app.
        try genuine.write(to: cachedViewPath(home: home, appID: "io.proctor.test.kit-other"))
        try expectAgentUnavailable(try launchOffline(daemon, home: home, appID: "io.proctor.test.kit-other"),
                                   because: "the cached view is for \(Self.appID), not io.proctor.test.kit-other")

        // Signed by proctord's own key, but for another user.
        try genuine.write(to: view)
        try resign(home: home, with: key) { $0["uid"] = 4242 }
        try expectAgentUnavailable(try launchOffline(daemon, home: home), because: "the cached view is for uid 4242, not 0")

        // Signed by proctord's own key, but older than the grace (a replayed older view).
        try genuine.write(to: view)
        try resign(home: home, with: key) { payload in
            payload["issuedAt"] = .string(RFC3339.string(milliseconds: Int64(Date().timeIntervalSince1970 * 1000) - 86_401_000))
        }
        try expectAgentUnavailable(try launchOffline(daemon, home: home), because: "past compliance.offlineGraceSeconds (86400 s)")

        // No view at all.
        try FileManager.default.removeItem(at: view)
        try expectAgentUnavailable(try launchOffline(daemon, home: home), because: "no cached view at \(view.path)")
        #expect(FileManager.default.fileExists(atPath: home.appendingPathComponent("kit-data").path), "no refusal wipes")
    }

    @Test func wipesAtAnOfflineLaunchPastOfflineWipeSeconds() throws {
        let daemon = try RunningDaemon(policy: Self.policy(offlineGraceSeconds: 1, compliance: ["offlineWipeSeconds": 2]))
        let home = daemon.root.appending("home")
        try cacheViewThenStopDaemon(daemon, home: home)
        Thread.sleep(forTimeInterval: 3)

        let app = try launchOffline(daemon, home: home)
        try expectAgentUnavailable(app, because: "past compliance.offlineWipeSeconds (2 s): the managed data was wiped")
        #expect(app.outputLines == ["delegate shouldWipeData directive=offline"])
        #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("kit-data").path))
        #expect(!FileManager.default.fileExists(atPath: cachedViewPath(home: home).path))
        #expect(try !keyringHasDataKey(), "the offline data key is gone from the kernel keyring")
    }

    @Test func refusesPastTheGraceButBeforeTheWipe() throws {
        let daemon = try RunningDaemon(policy: Self.policy(offlineGraceSeconds: 1, compliance: ["offlineWipeSeconds": 3600]))
        let home = daemon.root.appending("home")
        try cacheViewThenStopDaemon(daemon, home: home)
        Thread.sleep(forTimeInterval: 2.5)
        try expectAgentUnavailable(try launchOffline(daemon, home: home), because: "past compliance.offlineGraceSeconds (1 s)")
        #expect(FileManager.default.fileExists(atPath: home.appendingPathComponent("kit-data").path))
    }

    @Test func aRunningAppWipesPastOfflineWipeSecondsWithoutProctord() throws {
        let daemon = try RunningDaemon(policy: Self.policy(offlineGraceSeconds: 1, compliance: ["offlineWipeSeconds": 2]))
        let home = daemon.root.appending("home")
        let app = try PolicyTestApp.launch(appID: Self.appID, dataDirectories: ["~/kit-data"], daemon: daemon, home: home.path,
                                           environment: ["TESTAPP_PROTECTED_NOTE": "online"])
        try app.waitForOutputLine("delegate didBecomeActive")
        try daemon.kill()
        #expect(try app.waitForExit(timeout: .seconds(15)) == 69)
        #expect(app.outputLines.last == "delegate shouldWipeData directive=offline")
        #expect(app.errorOutput.contains("proctord could not be reached for longer than compliance.offlineWipeSeconds (2 s)"))
        #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("kit-data").path))
        #expect(try !keyringHasDataKey())
    }

    /// Whether this user's keyring holds a usable copy of the test app's data key (`keyctl`).
    func keyringHasDataKey() throws -> Bool {
        let keyctl = Process()
        keyctl.executableURL = URL(fileURLWithPath: "/usr/bin/keyctl")
        keyctl.arguments = ["search", "@u", "user", "proctor:\(Self.appID):data-key"]
        keyctl.standardOutput = FileHandle.nullDevice
        keyctl.standardError = FileHandle.nullDevice
        try keyctl.run()
        keyctl.waitUntilExit()
        return keyctl.terminationStatus == 0
    }
}
