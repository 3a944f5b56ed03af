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
}
