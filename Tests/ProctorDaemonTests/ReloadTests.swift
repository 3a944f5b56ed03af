import Foundation
import LinuxIO
@testable import ProctorDaemon
@testable import ProctorPolicy
import Testing
import TestSupport

/// A reload (SIGHUP, `Admin.Reload`) of a policy.d whose files merge to the policy in force
/// compiles and hashes nothing: the policy in force stands, with the new reading's file names
/// and time.
@Suite struct ReloadTests {
    private static func policy(version: String) -> String {
        """
        {"schema": 1, "version": "\(version)", "apps": {"io.proctor.test.notes": {"state": "authorized",
          "match": {"executable": "/usr/bin/notes"}, "dlp": {"print": "block"}}}}
        """
    }

    /// Runs `daemon`'s reload to its end (policy work inline, the swap on the loop's next turn).
    private func reload(_ daemon: Daemon) throws -> ReloadOutcome {
        var outcome: ReloadOutcome?
        daemon.reload { outcome = $0 }
        for _ in 0..<100 where outcome == nil {
            let stop = daemon.loop.schedule(after: .zero) { daemon.loop.stop() }
            defer { daemon.loop.cancel(stop) }
            try daemon.loop.run()
        }
        return try #require(outcome)
    }

    @Test func anUnchangedPolicyDirectoryKeepsThePolicyInForce() throws {
        let directory = try TemporaryDirectory(prefix: "proctor-reload")
        defer { directory.remove() }
        let policyDirectory = directory.path + "/config/policy.d"
        try FileManager.default.createDirectory(atPath: policyDirectory, withIntermediateDirectories: true)
        try Data(Self.policy(version: "one").utf8).write(to: URL(fileURLWithPath: policyDirectory + "/00.json"))
        let daemon = try Daemon.inProcess(.inProcess(directory: directory.path), loop: try EventLoop())
        daemon.runsPolicyWorkInline = true
        defer { daemon.closeState() }
        let started = daemon.active

        #expect(try reload(daemon).ok)
        #expect(daemon.active.compiled.storage === started.compiled.storage, "an unchanged policy.d was compiled again")
        #expect(daemon.active.sha256 == started.sha256)

        // Renamed: the same policy from another file, which the policy in force now names.
        try FileManager.default.moveItem(atPath: policyDirectory + "/00.json", toPath: policyDirectory + "/50-renamed.json")
        #expect(try reload(daemon).ok)
        #expect(daemon.active.compiled.storage === started.compiled.storage)
        #expect(daemon.active.sources == ["policy.d/50-renamed.json"])

        try Data(Self.policy(version: "two").utf8).write(to: URL(fileURLWithPath: policyDirectory + "/50-renamed.json"))
        #expect(try reload(daemon).ok)
        #expect(daemon.active.compiled.storage !== started.compiled.storage)
        #expect(daemon.active.version == "two")
        #expect(daemon.active.sha256 == daemon.active.compiled.policy.sha256 && daemon.active.sha256 != started.sha256)
    }

    /// A path spelt again in another Unicode form (é composed, then decomposed) is other bytes
    /// to the kernel and another SHA-256, though `String`'s `==` calls the two equal: under
    /// the same version the reload is refused, as any other content is; under a new one it
    /// is the new policy.
    @Test func aPathRespeltInAnotherUnicodeFormIsAChange() throws {
        func policy(version: String, folder: String) -> String {
            """
            {"schema": 1, "version": "\(version)", "apps": {"io.proctor.test.notes": {"state": "authorized",
              "dlp": {"fileExport": {"deny": ["/media/\(folder)/**"]}}}}}
            """
        }
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        let directory = try TemporaryDirectory(prefix: "proctor-reload")
        defer { directory.remove() }
        let policyDirectory = directory.path + "/config/policy.d"
        try FileManager.default.createDirectory(atPath: policyDirectory, withIntermediateDirectories: true)
        let file = URL(fileURLWithPath: policyDirectory + "/00.json")
        try Data(policy(version: "one", folder: composed).utf8).write(to: file)
        let daemon = try Daemon.inProcess(.inProcess(directory: directory.path), loop: try EventLoop())
        daemon.runsPolicyWorkInline = true
        defer { daemon.closeState() }
        let started = daemon.active

        try Data(policy(version: "one", folder: decomposed).utf8).write(to: file)
        let refused = try reload(daemon)
        #expect(!refused.ok)
        #expect(refused.problems.map(\.description).joined().contains("version one was loaded before with other content"))
        #expect(daemon.active.sha256 == started.sha256)

        try Data(policy(version: "two", folder: decomposed).utf8).write(to: file)
        #expect(try reload(daemon).ok)
        #expect(daemon.active.version == "two" && daemon.active.sha256 != started.sha256)
        let export = { (folder: String) in
            daemon.active.compiled.decide(DecisionRequest(app: "io.proctor.test.notes", action: .fileExport,
                                                          target: "/media/\(folder)/report.pdf")).allowed
        }
        #expect(!export(decomposed), "the new bytes are denied")
        #expect(export(composed), "the old bytes are not the policy's any more")
    }

    /// A reload whose only edit is a minimum version's build metadata is a change (`SemanticVersion`'s
    /// `==` ignores it, the canonical form does not): under the same version it is refused as other content.
    @Test func aMinimumVersionsBuildMetadataIsAChange() throws {
        func policy(version: String, minimum: String) -> String {
            """
            {"schema": 1, "version": "\(version)", "apps": {"io.proctor.test.notes": {"state": "authorized",
              "compliance": {"minVersion": "\(minimum)"}}}}
            """
        }
        let directory = try TemporaryDirectory(prefix: "proctor-reload")
        defer { directory.remove() }
        let policyDirectory = directory.path + "/config/policy.d"
        try FileManager.default.createDirectory(atPath: policyDirectory, withIntermediateDirectories: true)
        let file = URL(fileURLWithPath: policyDirectory + "/00.json")
        try Data(policy(version: "one", minimum: "2.0.0+linux").utf8).write(to: file)
        let daemon = try Daemon.inProcess(.inProcess(directory: directory.path), loop: try EventLoop())
        daemon.runsPolicyWorkInline = true
        defer { daemon.closeState() }
        let started = daemon.active

        try Data(policy(version: "one", minimum: "2.0.0+macos").utf8).write(to: file)
        let refused = try reload(daemon)
        #expect(!refused.ok)
        #expect(refused.problems.map(\.description).joined().contains("version one was loaded before with other content"))
        #expect(daemon.active.sha256 == started.sha256)

        try Data(policy(version: "two", minimum: "2.0.0+macos").utf8).write(to: file)
        #expect(try reload(daemon).ok)
        #expect(daemon.active.version == "two" && daemon.active.sha256 != started.sha256)
        #expect(daemon.active.compiled.policy.apps["io.proctor.test.notes"]?.settings.compliance.minVersion?.description
            == "2.0.0+macos")
    }

    /// proctord.conf's paths are bytes to the kernel: a reload whose only edit is a path respelt
    /// in another Unicode form (equal `String`s) is a change, and the fleet threads start again
    /// with the new file.
    @Test func aFleetPathRespeltInAnotherUnicodeFormIsAChange() throws {
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        let directory = try TemporaryDirectory(prefix: "proctor-reload")
        defer { directory.remove() }
        let policyDirectory = directory.path + "/config/policy.d"
        try FileManager.default.createDirectory(atPath: policyDirectory, withIntermediateDirectories: true)
        try Data(#"{"schema": 1, "version": "one", "apps": {}}"#.utf8).write(to: URL(fileURLWithPath: policyDirectory + "/00.json"))
        let conf = URL(fileURLWithPath: directory.path + "/config/proctord.conf")
        try Data("[Source]\nCACertificate=/etc/proctor/\(composed).pem\n".utf8).write(to: conf)
        let daemon = try Daemon.inProcess(.inProcess(directory: directory.path), loop: try EventLoop())
        daemon.runsPolicyWorkInline = true
        defer { daemon.closeState() }
        let started = daemon.fleet.generation
        try Data("[Source]\nCACertificate=/etc/proctor/\(composed).pem\n".utf8).write(to: conf)
        daemon.reloadFleetSettings()
        #expect(daemon.fleet.generation == started, "the same settings: the threads go on")

        try Data("[Source]\nCACertificate=/etc/proctor/\(decomposed).pem\n".utf8).write(to: conf)
        daemon.reloadFleetSettings()
        #expect(daemon.fleet.generation > started, "the fleet threads start again with the new path")
        #expect(daemon.fleet.configuration.source.caCertificate?.utf8.elementsEqual("/etc/proctor/\(decomposed).pem".utf8) == true)
    }
}
