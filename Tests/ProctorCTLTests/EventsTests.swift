import JSONCore
import Testing

/// `proctorctl events` against a fake proctord that streams canned events.
@Suite struct EventsTests {
    static let decisionLine = "2026-11-29T15:00:00+01:00  decision  io.proctor.demo.notes  action=print allowed=false "
        + #"reason="Printing is blocked." rule="apps[\"io.proctor.demo.notes\"].dlp.print""#
    static let policyLine = "2026-11-29T15:00:01+01:00  policy  -  version=2026-11-29.3"

    @Test func eventsPrintOneLineEachAndStopAfterCount() throws {
        let server = try FakeAdminServer(replies: [:], eventBatches: [AdminFixtures.events])
        defer { server.stop() }
        let result = try proctorctl(["events", "--count", "2", "--address", server.path])
        #expect(result.status == 0)
        #expect(result.error == "")
        #expect(result.outputLines == [Self.decisionLine, Self.policyLine])
        #expect(server.calls.first?.method == "io.proctor.Admin.Events")
        #expect(server.calls.first?.more == true)
        #expect(server.calls.first?.parameters == [:])
    }

    @Test func jsonIsOneEventObjectPerLine() throws {
        let server = try FakeAdminServer(replies: [:], eventBatches: [AdminFixtures.events])
        defer { server.stop() }
        let result = try proctorctl(["events", "--json", "--count", "3", "--address", server.path])
        #expect(result.status == 0)
        #expect(result.outputLines == AdminFixtures.events.map { JSONValue.object($0).serializedString() })
    }

    @Test func appAndKindsBecomeTheFilter() throws {
        let server = try FakeAdminServer(replies: [:], eventBatches: [AdminFixtures.events])
        defer { server.stop() }
        let result = try proctorctl(["events", "--app", "io.proctor.demo.notes", "--kind", "decision,policy", "--kind=wipe",
                                     "--count", "1", "--address", server.path])
        #expect(result.status == 0)
        #expect(server.calls.first?.parameters == ["filter": ["appId": "io.proctor.demo.notes",
                                                              "kinds": ["decision", "policy", "wipe"]]])
    }

    @Test func aDaemonGoingAwayEndsTheStreamWithExitThree() throws {
        let server = try FakeAdminServer(replies: [:], eventBatches: [[AdminFixtures.events[0]], [AdminFixtures.events[1]]])
        defer { server.stop() }
        let result = try proctorctl(["events", "--address", server.path])
        #expect(result.status == 3)
        #expect(result.outputLines == [Self.decisionLine])
        #expect(result.error == "proctorctl: cannot talk to proctord at \(server.path): the service closed the connection\n")
    }

    @Test func followReconnectsWhenTheDaemonComesBack() throws {
        let server = try FakeAdminServer(replies: [:], eventBatches: [[AdminFixtures.events[0]], [AdminFixtures.events[1]]])
        defer { server.stop() }
        let result = try proctorctl(["events", "--follow", "--count", "2", "--address", server.path])
        #expect(result.status == 0)
        #expect(result.outputLines == [Self.decisionLine, Self.policyLine])
        #expect(result.error == """
            proctorctl events: lost proctord at \(server.path) (the service closed the connection); waiting for it
            proctorctl events: connected to proctord at \(server.path) again

            """)
        #expect(server.calls.count == 2)
    }
}
