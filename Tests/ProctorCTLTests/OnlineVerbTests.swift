import JSONCore
import ProctorPolicy
import Testing
import TestSupport
import Varlink

/// The online verbs against a fake proctord speaking the real Admin interface: the
/// readable output, `--json`, the parameters sent, and the exit statuses.
@Suite struct OnlineVerbTests {
    /// `proctorctl VERB --address …` against a fake proctord answering Status with the fixture.
    private func againstStatusFixture(_ verb: String) throws -> CommandResult {
        let policy = try AdminFixtures.examplePolicy()
        let server = try FakeAdminServer(replies: ["Status": { _ in AdminFixtures.status(policy) }])
        defer { server.stop() }
        return try proctorctl([verb, "--address", server.path])
    }

    @Test func statusPrintsTheDaemonPolicyReloadAndCountsInLocalTime() throws {
        let result = try againstStatusFixture("status")
        #expect(result.status == 0)
        #expect(result.error == "")
        try Golden.check(result.output, "status")
    }

    @Test func jsonPrintsTheReplyAsOneObject() throws {
        let policy = try AdminFixtures.examplePolicy()
        let server = try FakeAdminServer(replies: ["Status": { _ in AdminFixtures.status(policy) }])
        defer { server.stop() }
        let result = try proctorctl(["status", "--json"], environment: ["PROCTOR_ADMIN_SOCKET": server.path])
        #expect(result.status == 0)
        #expect(result.output == JSONValue.object(AdminFixtures.status(policy)).serializedString() + "\n")
    }

    @Test func metricsCountFetchesAndStatusReportsFromTheStatusReply() throws {
        let result = try againstStatusFixture("metrics")
        #expect(result.status == 0)
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.contains("proctor_bundle_fetch_failures_total 1"))
        #expect(lines.contains(#"proctor_status_reports_total{result="sent"} 41"#))
        #expect(lines.contains(#"proctor_status_reports_total{result="failed"} 1"#))
        #expect(lines.contains("# TYPE proctor_status_reports_total counter"))
        // 2026-11-29T14:00:01Z
        #expect(lines.contains("proctor_status_report_last_timestamp_seconds 1795960801"))
    }

    @Test func appsPrintsAnAlignedTableSortedById() throws {
        let server = try FakeAdminServer(replies: ["ListApps": { _ in AdminFixtures.apps }])
        defer { server.stop() }
        let result = try proctorctl(["apps", "--address", server.path])
        #expect(result.status == 0)
        try Golden.check(result.output, "apps")
    }

    @Test func appShowsSessionsSettingsFeedbackAndWipes() throws {
        let server = try FakeAdminServer(replies: ["GetApp": { parameters throws(VarlinkError) in
            guard parameters["appId"] == "io.proctor.demo.notes" else { throw AdminFixtures.unknownApp(parameters["appId"]?.stringValue ?? "") }
            return AdminFixtures.app
        }])
        defer { server.stop() }
        let result = try proctorctl(["app", "io.proctor.demo.notes", "--address", server.path])
        #expect(result.status == 0)
        try Golden.check(result.output, "app")
    }

    @Test func anUnknownAppIsARefusalWithTheErrorNameAndExitFour() throws {
        let server = try FakeAdminServer(replies: ["GetApp": { parameters throws(VarlinkError) in
            throw AdminFixtures.unknownApp(parameters["appId"]?.stringValue ?? "")
        }])
        defer { server.stop() }
        let result = try proctorctl(["app", "com.example.nothing", "--address", server.path])
        #expect(result.status == 4)
        #expect(result.output == "")
        #expect(result.error == "proctorctl app: proctord refused: io.proctor.Admin.UnknownApp: "
            + "no app com.example.nothing in policy or inventory\n")

        let json = try proctorctl(["app", "com.example.nothing", "--json", "--address", server.path])
        #expect(json.status == 4)
        #expect(json.output == #"{"error":"io.proctor.Admin.UnknownApp","parameters":{"appId":"com.example.nothing"}}"# + "\n")
    }

    @Test func permissionDeniedIsARefusal() throws {
        let server = try FakeAdminServer(replies: ["Wipe": { _ throws(VarlinkError) in throw VarlinkError.permissionDenied }])
        defer { server.stop() }
        let result = try proctorctl(["wipe", "com.example.mail", "--address", server.path])
        #expect(result.status == 4)
        #expect(result.error == "proctorctl wipe: proctord refused: org.varlink.service.PermissionDenied: permission denied: "
            + "Admin calls need root or membership of the proctor-admin group\n")
    }

    @Test func anInvalidParameterNamesTheParameterAndWhy() throws {
        let server = try FakeAdminServer(replies: ["Decide": { _ throws(VarlinkError) in
            throw VarlinkError(name: "io.proctor.Admin.InvalidParameter",
                               parameters: ["parameter": "appVersion", "reason": "below the oldest version this daemon knows"])
        }])
        defer { server.stop() }
        let result = try proctorctl(["check", "a.b", "launch", "--app-version", "0.0.1", "--address", server.path])
        #expect(result.status == 4)
        #expect(result.error == "proctorctl check: proctord refused: io.proctor.Admin.InvalidParameter: proctord cannot "
            + "accept appVersion: below the oldest version this daemon knows\n")
    }

    @Test func policyShowPrintsTheInfoThenTheDocumentAsIndentedJSON() throws {
        let policy = try AdminFixtures.examplePolicy()
        let server = try FakeAdminServer(replies: ["GetPolicy": { _ in
            ["policy": policy.canonicalJSON, "info": AdminFixtures.policyInfo(policy)]
        }])
        defer { server.stop() }
        let result = try proctorctl(["policy", "show", "--address", server.path])
        #expect(result.status == 0)
        try Golden.check(result.output, "policy-show")
        let lines = result.outputLines
        let document = lines.dropFirst(5).joined(separator: "\n")
        #expect(try Policy.parse(Array(document.utf8), source: "output") == policy)
    }

    @Test func policyApplySendsTheMergedCanonicalPolicyAndTheExpectedVersion() throws {
        let policy = try AdminFixtures.examplePolicy()
        let server = try FakeAdminServer(replies: ["ApplyPolicy": { parameters throws(VarlinkError) in
            if let expected = parameters["expectedVersion"]?.stringValue, expected != "2026-11-29.1" {
                throw VarlinkError(name: "io.proctor.Admin.VersionConflict",
                                   parameters: ["expected": .string(expected), "current": "2026-11-29.1"])
            }
            return ["version": .string(policy.version), "sha256": .string(policy.sha256)]
        }])
        defer { server.stop() }
        let applied = try proctorctl(["policy", "apply", "config/examples", "--expect-version", "2026-11-29.1",
                                      "--address", server.path])
        #expect(applied.status == 0)
        #expect(applied.output == "applied: version 2026-11-29.2 is in force, sha256 \(policy.sha256)\n")
        #expect(server.calls.first?.parameters == ["policy": policy.canonicalJSON, "expectedVersion": "2026-11-29.1"])

        let conflict = try proctorctl(["policy", "apply", "config/examples", "--expect-version=2026-01-01.1",
                                       "--address", server.path])
        #expect(conflict.status == 4)
        #expect(conflict.error == "proctorctl policy apply: proctord refused: io.proctor.Admin.VersionConflict: "
            + "the policy in force is version 2026-11-29.1, not the expected 2026-01-01.1; nothing changed\n")
    }

    @Test func policyApplyReadsStandardInputAndReportsARefusedPolicyProblemByProblem() throws {
        let server = try FakeAdminServer(replies: ["ApplyPolicy": { _ throws(VarlinkError) in
            throw VarlinkError(name: "io.proctor.Admin.InvalidPolicy", parameters: ["problems": [
                ["path": "apps[\"a.b\"].match.executable", "message": "no such file /usr/bin/b"],
                ["path": "version", "message": "older than the version in force"],
            ]])
        }])
        defer { server.stop() }
        let result = try proctorctl(["policy", "apply", "-", "--address", server.path],
                                    input: #"{"schema": 1, "version": "1", "apps": {"a.b": {"match": {"executable": "/usr/bin/b"}}}}"#)
        #expect(result.status == 4)
        #expect(result.error == """
            proctorctl policy apply: proctord refused: io.proctor.Admin.InvalidPolicy: the policy is invalid (2 problems); nothing changed
              apps["a.b"].match.executable: no such file /usr/bin/b
              version: older than the version in force

            """)
        #expect(server.calls.first?.parameters["policy"]?["apps"]?["a.b"]?["state"] == "authorized")
    }

    @Test func policyApplyDoesNotSendAnInvalidPolicy() throws {
        let server = try FakeAdminServer(replies: ["ApplyPolicy": { _ in [:] }])
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try directory.write("bad.json", #"{"schema": 1, "version": "1", "apps": {"a.b": {"state": "on"}}}"#)
        let result = try proctorctl(["policy", "apply", file, "--address", server.path])
        #expect(result.status == 2)
        #expect(result.error.hasPrefix("\(file):1:"))
        #expect(result.error.contains("apps[\"a.b\"].state"))
        #expect(server.calls.isEmpty)
    }

    @Test func policyDiffFindsNoDifferenceInTheSamePolicySplitDifferently() throws {
        let policy = try AdminFixtures.examplePolicy()
        let server = try FakeAdminServer(replies: ["GetPolicy": { _ in
            ["policy": policy.canonicalJSON, "info": AdminFixtures.policyInfo(policy)]
        }])
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try directory.write("one.json", PrettyPrinted.policy(policy))
        let result = try proctorctl(["policy", "diff", file, "--address", server.path])
        #expect(result.status == 0)
        #expect(result.output == "no difference: \(file) is the policy in force (version 2026-11-29.2, sha256 \(policy.sha256))\n")
        let json = try proctorctl(["policy", "diff", "config/examples", "--json", "--address", server.path])
        #expect(json.status == 0)
        #expect(try JSONParser.parse(json.output)["identical"] == true)
    }

    @Test func policyDiffListsAppsAndSettingsAndExitsOne() throws {
        let current = try AdminFixtures.examplePolicy()
        let server = try FakeAdminServer(replies: ["GetPolicy": { _ in
            ["policy": current.canonicalJSON, "info": AdminFixtures.policyInfo(current)]
        }])
        defer { server.stop() }
        var proposed = current
        proposed.version = "2026-11-30.1"
        proposed.apps["com.example.new"] = AppPolicy(state: .blocked)
        proposed.apps["com.example.notes"] = nil
        proposed.apps["io.proctor.demo.notes"]?.settings.dlp.print = .allow
        proposed.apps["io.proctor.demo.notes"]?.config["theme"] = nil
        proposed.defaults.dlp.clipboardCharLimit = 10
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try directory.write("proposed.json", PrettyPrinted.policy(proposed))
        let result = try proctorctl(["policy", "diff", file, "--address", server.path])
        #expect(result.status == 1)
        try Golden.check(result.output, "policy-diff", placeholders: [file: "<proposed.json>"])
        let json = try proctorctl(["policy", "diff", file, "--json", "--address", server.path])
        #expect(json.status == 1)
        let report = try JSONParser.parse(json.output)
        #expect(report["identical"] == false)
        #expect(report["proposed"] == ["version": "2026-11-30.1", "sha256": .string(proposed.sha256)])
        #expect(report["appsAdded"] == ["com.example.new"])
        #expect(report["appsRemoved"] == ["com.example.notes"])
        #expect(report["changes"]?.arrayValue?[1] == ["path": "apps[\"io.proctor.demo.notes\"].config.theme", "current": "dark"])
    }

    /// An executable path, a config member or value respelt in another Unicode form is another
    /// file or setting (the sha256 differs): the diff names it, though `String`'s `==` finds the
    /// two spellings equal.
    @Test func policyDiffListsASettingRespeltInAnotherUnicodeForm() throws {
        var current = try AdminFixtures.examplePolicy()
        current.apps["io.proctor.demo.notes"]?.match = MatchRule(executable: "/opt/caf\u{E9}/notes")
        current.apps["io.proctor.demo.notes"]?.config["theme"] = "caf\u{E9}"
        let inForce = current
        let server = try FakeAdminServer(replies: ["GetPolicy": { _ in
            ["policy": inForce.canonicalJSON, "info": AdminFixtures.policyInfo(inForce)]
        }])
        defer { server.stop() }
        var proposed = current
        proposed.apps["io.proctor.demo.notes"]?.match = MatchRule(executable: "/opt/cafe\u{301}/notes")
        proposed.apps["io.proctor.demo.notes"]?.config["theme"] = "cafe\u{301}"
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try directory.write("proposed.json", PrettyPrinted.policy(proposed))
        let json = try proctorctl(["policy", "diff", file, "--json", "--address", server.path])
        #expect(json.status == 1)
        let report = try JSONParser.parse(json.output)
        #expect(report["appsChanged"] == ["io.proctor.demo.notes"])
        let paths = report["changes"]?.arrayValue?.compactMap { $0["path"]?.stringValue } ?? []
        #expect(paths.map { Array($0.utf8) } == [
            #"apps["io.proctor.demo.notes"].config.theme"#, #"apps["io.proctor.demo.notes"].match.executable"#,
        ].map { Array($0.utf8) })
    }

    @Test func policyHistoryAndRollback() throws {
        let server = try FakeAdminServer(replies: [
            "PolicyHistory": { _ in AdminFixtures.history },
            "RollbackPolicy": { parameters throws(VarlinkError) in
                guard parameters["version"] == "2026-11-29.1" else {
                    throw VarlinkError(name: "io.proctor.Admin.UnknownVersion", parameters: ["version": parameters["version"] ?? nil])
                }
                return ["version": "2026-11-29.1", "sha256": .string(String(repeating: "a", count: 64))]
            },
        ])
        defer { server.stop() }
        let history = try proctorctl(["policy", "history", "--address", server.path])
        #expect(history.status == 0)
        try Golden.check(history.output, "policy-history")
        let rollback = try proctorctl(["policy", "rollback", "2026-11-29.1", "--address", server.path])
        #expect(rollback.status == 0)
        #expect(rollback.output == "rolled back: version 2026-11-29.1 is in force, sha256 \(String(repeating: "a", count: 64))\n")
        let unknown = try proctorctl(["policy", "rollback", "1999", "--address", server.path])
        #expect(unknown.status == 4)
        #expect(unknown.error == "proctorctl policy rollback: proctord refused: io.proctor.Admin.UnknownVersion: no applied "
            + "policy with version 1999 in history (see 'proctorctl policy history')\n")
    }

    @Test func reloadReportsSuccessAndAFailedReloadExitsTwo() throws {
        let policy = try AdminFixtures.examplePolicy()
        let server = try FakeAdminServer(replies: ["Reload": { _ in
            ["result": ["at": "2026-11-29T14:00:00Z", "ok": true, "problems": []], "policy": AdminFixtures.policyInfo(policy)]
        }])
        defer { server.stop() }
        let ok = try proctorctl(["reload", "--address", server.path])
        #expect(ok.status == 0)
        #expect(ok.output == "reloaded: version 2026-11-29.2, sha256 \(policy.sha256), from "
            + "/etc/proctor/policy.d/00-defaults.json, /etc/proctor/policy.d/10-notes.json\n")

        let failing = try FakeAdminServer(replies: ["Reload": { _ in
            ["result": ["at": "2026-11-29T14:00:00Z", "ok": false,
                        "problems": [["path": "defaults.dlp.print", "message": "found \"no\", expected \"allow\" or \"block\""]]],
             "policy": AdminFixtures.policyInfo(policy)]
        }])
        defer { failing.stop() }
        let failed = try proctorctl(["reload", "--address", failing.path])
        #expect(failed.status == 2)
        #expect(failed.output == "")
        try Golden.check(failed.error, "reload-failed.stderr")
    }

    @Test func checkAsksDecideAndExitsZeroWhenAllowedOneWhenDenied() throws {
        let server = try FakeAdminServer(replies: ["Decide": { parameters in
            AdminFixtures.decide(allowed: parameters["target"] == "com.example.notes")
        }])
        defer { server.stop() }
        let denied = try proctorctl(["check", "io.proctor.demo.notes", "clipboard.copy", "org.other.editor", "--size", "120",
                                     "--app-version", "1.4.0", "--address", server.path])
        #expect(denied.status == 1)
        try Golden.check(denied.output, "check-denied")
        #expect(server.calls.first?.parameters == ["appId": "io.proctor.demo.notes", "action": "clipboard.copy",
                                                   "target": "org.other.editor", "size": 120, "appVersion": "1.4.0"])
        let allowed = try proctorctl(["check", "io.proctor.demo.notes", "clipboard.copy", "com.example.notes", "--json",
                                      "--address", server.path])
        #expect(allowed.status == 0)
        #expect(allowed.output == JSONValue.object(AdminFixtures.decide(allowed: true)).serializedString() + "\n")
    }

    @Test func wipeAndNotify() throws {
        let server = try FakeAdminServer(replies: [
            "Wipe": { parameters in ["directiveId": "w-3", "deliveredTo": parameters["appId"] == "com.example.mail" ? 0 : 2] },
            "Notify": { _ in ["delivered": 1] },
        ])
        defer { server.stop() }
        let later = try proctorctl(["wipe", "com.example.mail", "--address", server.path])
        #expect(later.status == 0)
        #expect(later.output == "wipe w-3 ordered for com.example.mail: no session is connected: it will be delivered at the app's next registration\n")
        let now = try proctorctl(["wipe", "io.proctor.demo.notes", "--address", server.path])
        #expect(now.output == "wipe w-3 ordered for io.proctor.demo.notes: delivered to 2 connected sessions\n")
        let notified = try proctorctl(["notify", "io.proctor.demo.notes", #"{"command": "sync", "days": 3}"#, "--address", server.path])
        #expect(notified.status == 0)
        #expect(notified.output == "delivered to 1 session of io.proctor.demo.notes\n")
        #expect(server.calls.last?.parameters == ["appId": "io.proctor.demo.notes", "payload": ["command": "sync", "days": 3]])
    }
}

/// Policies written as people write them: indented, keys in another order than canonical.
enum PrettyPrinted {
    static func policy(_ policy: Policy) -> String {
        // Reverse the top-level order so the file's bytes differ from the canonical form.
        let members = policy.canonicalJSON.objectValue ?? [:]
        return "{\n" + members.keys.sorted(by: >).map { "  \(JSONValue.string($0).serializedString()): \(members[$0]!.serializedString())" }
            .joined(separator: ",\n") + "\n}\n"
    }
}
