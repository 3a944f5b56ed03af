import Foundation
import JSONCore
import Testing
import TestSupport

/// ProtectedStorage in a real app process with the data key proctord releases (issue 13 §1–3):
/// no plaintext on disk, the key survives app and proctord restarts, and a wipe issued while
/// the app is stopped leaves its files — and any copy of them — unreadable.
@Suite(.serialized) struct DataKeyWiringTests {
    /// Not PolicyApplicationTests' app: that suite runs beside this one and checks that its
    /// app's data key is gone from this user's keyring after a wipe.
    static let appID = "io.proctor.test.kit.datakeys"

    /// Runs the app once: it logs the protected note it finds and writes `note`; returns the
    /// lines from launch to `protected wrote`, then stops it.
    func run(_ daemon: RunningDaemon, home: URL, note: String) throws -> [String] {
        let app = try PolicyTestApp.launch(appID: Self.appID, dataDirectories: ["~/kit-data"], daemon: daemon, home: home.path,
                                           environment: ["TESTAPP_PROTECTED_NOTE": note])
        try app.waitForOutputLine("delegate didBecomeActive")
        #expect(try app.terminate() == 0, "\(app.errorOutput)")
        return app.outputLines.filter { $0.hasPrefix("protected ") || $0.hasPrefix("delegate shouldWipeData") }
    }

    @Test func protectedFilesHoldNoPlaintextAndAWipeWhileStoppedShredsThemAcrossADaemonRestart() throws {
        let daemon = try RunningDaemon(policy: PolicyApplicationTests.policy(appID: Self.appID))
        let home = daemon.root.appending("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let file = home.appendingPathComponent("kit-data/protected/note")

        #expect(try run(daemon, home: home, note: "first secret note") == ["protected before=none", "protected wrote"])
        let onDisk = try Data(contentsOf: file)
        #expect(onDisk.range(of: Data("first secret note".utf8)) == nil, "the note is encrypted on disk")
        #expect(onDisk.prefix(4) == Data("PKPS".utf8))

        // The same key after the app restarts, and after proctord restarts (a crash).
        #expect(try run(daemon, home: home, note: "second secret note") == ["protected before=first secret note", "protected wrote"])
        try daemon.kill()
        try daemon.start()
        #expect(try run(daemon, home: home, note: "third secret note") == ["protected before=second secret note", "protected wrote"])

        // The app is stopped; a copy of its file is kept (a backup). The wipe destroys the key at
        // once, and proctord restarting in between changes nothing.
        let backup = try Data(contentsOf: file)
        let directive = try #require(try daemon.admin("Wipe", ["appId": .string(Self.appID)])["directiveId"]?.stringValue)
        let keys = try daemon.admin("GetApp", ["appId": .string(Self.appID)])["app"]?["dataKeys"]?.arrayValue ?? []
        #expect(keys.count == 1 && keys.allSatisfy { $0["destroyedAt"] != nil })
        try daemon.kill()
        try daemon.start()

        // At its next launch the SDK removes the files, and a new key generation serves new data.
        #expect(try run(daemon, home: home, note: "after the wipe") == ["delegate shouldWipeData directive=\(directive)",
                                                                        "protected before=none", "protected wrote"])
        // The backup, put back, cannot be read: its key is gone.
        try backup.write(to: file)
        let lines = try run(daemon, home: home, note: "unused")
        let before = try #require(lines.first)
        #expect(before.hasPrefix("protected before error=protected file \"note\" was encrypted with key "), "\(lines)")
        let generations = try daemon.admin("GetApp", ["appId": .string(Self.appID)])["app"]?["dataKeys"]?.arrayValue ?? []
        #expect(generations.compactMap { $0["generation"]?.intValue }.sorted() == [1, 2])
    }
}
