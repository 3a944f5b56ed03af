import JSONCore
import Testing
import Varlink

/// `proctorctl events` against a fake proctord that answers `EventHistory` with canned
/// events. (`--follow` against the real daemon: Tests/python/test_events.py.)
@Suite struct EventsTests {
    static let decisionLine = "2026-11-29T15:00:00+01:00  decision  io.proctor.demo.notes  action=print allowed=false "
        + #"reason="Printing is blocked." rule="apps[\"io.proctor.demo.notes\"].dlp.print""#
    static let policyLine = "2026-11-29T15:00:01+01:00  policy  -  version=2026-11-29.3"

    static func history(_ events: [[String: JSONValue]], truncated: Bool = false) -> FakeAdminServer.Handler {
        { _ in ["events": .array(events.map(JSONValue.object)), "lastId": 6, "truncated": .bool(truncated)] }
    }

    @Test func linesAskForTheNewestNAndPrintOneLineEach() throws {
        let server = try FakeAdminServer(replies: ["EventHistory": Self.history(Array(AdminFixtures.events.prefix(2)))])
        defer { server.stop() }
        let result = try proctorctl(["events", "-n", "2", "--address", server.path])
        #expect(result.status == 0)
        #expect(result.error == "")
        #expect(result.outputLines == [Self.decisionLine, Self.policyLine])
        #expect(server.calls.map(\.method) == ["io.proctor.Admin.EventHistory"])
        #expect(server.calls.first?.parameters == ["limit": 2])
    }

    @Test func jsonIsOneEventObjectPerLine() throws {
        let server = try FakeAdminServer(replies: ["EventHistory": Self.history(AdminFixtures.events)])
        defer { server.stop() }
        for format in [["--json"], ["--output", "json"], ["-o=json"]] {
            let result = try proctorctl(["events"] + format + ["--address", server.path])
            #expect(result.status == 0)
            #expect(result.outputLines == AdminFixtures.events.map { JSONValue.object($0).serializedString() })
        }
    }

    @Test func appKindsAndTimesBecomeTheQuery() throws {
        let server = try FakeAdminServer(replies: ["EventHistory": Self.history([])])
        defer { server.stop() }
        let result = try proctorctl(["events", "--app", "io.proctor.demo.notes", "--kind", "decision,policy", "--kind=denial",
                                     "--since", "2026-11-29 14:00", "-U", "2026-11-29T15:30:00+01:00", "--address", server.path])
        #expect(result.status == 0)
        #expect(result.output == "")
        #expect(server.calls.first?.parameters == [
            "filter": ["appId": "io.proctor.demo.notes", "kinds": ["decision", "policy", "denial"]],
            "since": "2026-11-29T13:00:00.000Z", "until": "2026-11-29T14:30:00.000Z",
        ])
    }

    @Test func aTruncatedAnswerIsSaidOnStandardError() throws {
        let server = try FakeAdminServer(replies: ["EventHistory": Self.history([AdminFixtures.events[0]], truncated: true)])
        defer { server.stop() }
        let result = try proctorctl(["events", "--address", server.path])
        #expect(result.status == 0)
        #expect(result.outputLines == [Self.decisionLine])
        #expect(result.error == "proctorctl events: more events matched; these are the newest 1 (narrow with --since, --until or --lines)\n")
    }

    @Test func aLateReportShowsWhenProctordReceivedIt() throws {
        var late = AdminFixtures.events[1]
        late["receivedAt"] = "2026-11-29T14:05:01Z"
        let server = try FakeAdminServer(replies: ["EventHistory": Self.history([late])])
        defer { server.stop() }
        let result = try proctorctl(["events", "--address", server.path])
        #expect(result.outputLines == [Self.policyLine + " receivedAt=2026-11-29T15:05:01+01:00"])
    }
}
