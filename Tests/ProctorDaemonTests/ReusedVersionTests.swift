import JSONCore
import ProctorPolicy
@testable import ProctorDaemon
import Testing

@Suite struct ReusedVersionTests {
    private func loaded(_ text: String) throws -> LoadedPolicy {
        LoadedPolicy(policy: try Policy.parse(Array(text.utf8), source: "test.json"), sources: ["test.json"])
    }

    private func kept(_ loaded: LoadedPolicy) -> KeptDirectory {
        KeptDirectory(compiled: CompiledPolicy(loaded.policy), sources: loaded.sources)
    }

    /// policy.d re-read under the version loaded before must hold the same content.
    @Test func theSameVersionIsRefusedOnlyWithOtherContent() throws {
        let first = try loaded(#"{"schema": 1, "version": "v1", "apps": {"a.b": {"state": "blocked"}}}"#)
        let same = try loaded(#"{"version": "v1", "schema": 1, "apps": {"a.b": {"state": "blocked"}}}"#)
        let changed = try loaded(#"{"schema": 1, "version": "v1", "apps": {"a.b": {"state": "authorized"}}}"#)
        let renamed = try loaded(#"{"schema": 1, "version": "v2", "apps": {"a.b": {"state": "authorized"}}}"#)
        #expect(Daemon.reusedVersionProblem(first, previous: nil) == nil)
        #expect(Daemon.reusedVersionProblem(same, previous: kept(first)) == nil)
        #expect(Daemon.reusedVersionProblem(renamed, previous: kept(first)) == nil)
        let problem = try #require(Daemon.reusedVersionProblem(changed, previous: kept(first)))
        #expect(problem.message == "version v1 was loaded before with other content (sha256 \(first.policy.sha256), "
            + "now \(changed.policy.sha256)); give the changed policy a new version")
        #expect(problem.path == JSONPath.root.appending("version"))
    }
}
