import JSONCore
import ProctorPolicy
import Testing
import TestSupport

/// The commands that work without proctord: `policy validate` and `check --policy`.
@Suite struct OfflineCommandTests {
    @Test func validateAcceptsTheShippedAndExamplePolicies() throws {
        let shipped = try proctorctl(["policy", "validate", "config/policy.d"])
        let policy = try PolicyDirectory.load(repositoryRoot.path + "/config/policy.d").policy
        #expect(shipped.status == 0)
        #expect(shipped.output == "valid: version 2026-11-29.1, sha256 \(policy.sha256), 0 apps, source config/policy.d/00-defaults.json\n")
        let examples = try proctorctl(["policy", "validate", "config/examples/"])
        let merged = try AdminFixtures.examplePolicy()
        #expect(examples.status == 0)
        #expect(examples.output == "valid: version 2026-11-29.2, sha256 \(merged.sha256), 6 apps, sources "
            + "config/examples/00-defaults.json, config/examples/10-notes.json, config/examples/20-mail.json\n")
        let json = try proctorctl(["policy", "validate", "--json", "config/examples"])
        #expect(json.status == 0)
        #expect(json.output == "[]\n")
    }

    @Test func validateReportsEveryProblemWithFileLineColumnAndPath() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try directory.write("broken.json", """
            {
              "schema": 1,
              "version": "1",
              "apps": { "a.b": { "state": "on", "dlp": { "print": "maybe" } } }
            }
            """)
        let result = try proctorctl(["policy", "validate", file])
        #expect(result.status == 2)
        #expect(result.output == "")
        let lines = result.error.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { $0.hasPrefix("\(file):4:") })
        #expect(lines.contains { $0.contains(#"apps["a.b"].state"#) })
        #expect(lines.contains { $0.contains(#"apps["a.b"].dlp.print"#) })

        let json = try proctorctl(["policy", "validate", "--json", file])
        #expect(json.status == 2)
        let problems = try #require(try JSONParser.parse(json.output).arrayValue)
        #expect(problems.count == 2)
        #expect(problems.allSatisfy { $0["source"] == .string(file) && $0["line"] == 4 })
        #expect(Set(problems.compactMap { $0["path"]?.stringValue }) == [#"apps["a.b"].state"#, #"apps["a.b"].dlp.print"#])
    }

    /// An app's managed `config` with one key in two Unicode forms ("é" composed, then "e" and
    /// U+0301) cannot be kept as both: the drop-in is refused at the second key, which the
    /// message spells out beside the first.
    @Test func validateRefusesAKeyRepeatedInAnotherUnicodeForm() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try directory.write("00-defaults.json", #"{"schema": 1, "version": "1"}"#)
        let file = try directory.write("10-app.json", """
            {
              "schema": 1,
              "apps": { "a.b": { "state": "allowed", "config": {
                "caf\u{E9}": 1,
                "cafe\u{301}": 2 } } }
            }
            """)
        let result = try proctorctl(["policy", "validate", directory.path])
        #expect(result.status == 2)
        #expect(result.error == "\(file):5:5: apps[\"a.b\"].config[\"cafe\u{301}\"]: invalid JSON: duplicate key \"cafe\\u0301\": "
            + "the earlier key \"caf\\u00e9\" in another Unicode form; an object may say each key once\n")
    }

    @Test func validateRefusesWhatIsNotAPolicy() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let notJSON = try directory.write("notes.json", "schema = 1\n")
        let result = try proctorctl(["policy", "validate", notJSON])
        #expect(result.status == 2)
        #expect(result.error.hasPrefix("\(notJSON):1:1: "))
        let missing = try proctorctl(["policy", "validate", directory.path + "/none.json"])
        #expect(missing.status == 2)
        #expect(missing.error.contains("none.json"))
        let fragment = try directory.write("20-x.json", #"{"schema": 1, "apps": {}}"#)
        #expect(try proctorctl(["policy", "validate", fragment]).status == 2)
        #expect(try proctorctl(["policy", "validate", "--fragment", fragment]).status == 0)
        let stdin = try proctorctl(["policy", "validate", "-"], input: #"{"schema": 1, "version": "7"}"#)
        #expect(stdin.status == 0)
        #expect(stdin.output.hasPrefix("valid: version 7, sha256 "))
    }

    @Test(arguments: [
        (["io.proctor.demo.notes", "clipboard.copy", "com.example.notes"], 0,
         #"{"allowed":true,"reason":"Clipboard level managed-paste-in allows copying to managed apps.","rule":"apps[\"io.proctor.demo.notes\"].dlp.clipboard.level"}"#),
        (["io.proctor.demo.notes", "clipboard.copy", "org.other", "--size", "41"], 1,
         #"{"allowed":false,"reason":"Clipboard level managed-paste-in allows copying only to managed apps, and the destination is not managed.","rule":"apps[\"io.proctor.demo.notes\"].dlp.clipboard.level"}"#),
        (["io.proctor.demo.notes", "print"], 1,
         #"{"allowed":false,"reason":"Printing is blocked.","rule":"apps[\"io.proctor.demo.notes\"].dlp.print"}"#),
        (["com.example.mail", "file.export", "/home/alice/Mail/x.eml"], 0,
         #"{"allowed":true,"reason":"The path matches a fileExport.allow pattern and no deny pattern.","rule":"apps[\"com.example.mail\"].dlp.fileExport.allow[0]"}"#),
        (["com.example.legacy-chat", "launch"], 1,
         #"{"allowed":false,"reason":"The app's state is blocked, so it may not run or handle data.","rule":"apps[\"com.example.legacy-chat\"].state"}"#),
        (["io.proctor.demo.notes", "launch", "--app-version", "1.0.0"], 0,
         #"{"allowed":true,"reason":"The app's version is below compliance.minVersion; onViolation is warn, so it may run with a warning.","rule":"apps[\"io.proctor.demo.notes\"].compliance.minVersion","violation":"warn"}"#),
    ])
    func checkWithPolicyDecidesOfflineAndPrintsExactJSON(_ question: [String], _ status: Int32, _ json: String) throws {
        let result = try proctorctl(["check", "--policy", "config/examples", "--json"] + question)
        #expect(result.status == status)
        #expect(result.error == "")
        #expect(result.output == json + "\n")
        // The same decision as the engine's, read from the same files.
        let decision = try JSONParser.parse(json)
        #expect(decision["allowed"] == .bool(status == 0))
    }

    @Test func checkWithPolicyPrintsTheDecisionReadably() throws {
        let policy = try AdminFixtures.examplePolicy()
        let result = try proctorctl(["check", "--policy", "config/examples", "io.proctor.demo.notes", "screen-capture"])
        #expect(result.status == 1)
        #expect(result.outputLines[0] == "decision:  denied")
        #expect(result.outputLines[1] == #"rule:      apps["io.proctor.demo.notes"].dlp.screenCapture"#)
        #expect(result.outputLines[2].hasPrefix("reason:    "))
        #expect(result.outputLines[3] == "policy:    version 2026-11-29.2, sha256 \(policy.sha256) (offline, from config/examples)")
    }

    /// config/examples says `notifications: block-org-data` for the demo.
    @Test(arguments: [("org", 1, "denied"), ("plain", 0, "allowed")])
    func checkANotification(target: String, status: Int32, decision: String) throws {
        let result = try proctorctl(["check", "--policy", "config/examples", "io.proctor.demo.notes", "notification", target])
        #expect(result.status == status)
        #expect(result.outputLines[0] == "decision:  \(decision)")
        #expect(result.outputLines[1] == #"rule:      apps["io.proctor.demo.notes"].dlp.notifications"#)
    }

    @Test func checkWithABrokenPolicyIsBadInput() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try directory.write("bad.json", #"{"schema": 2, "version": "1"}"#)
        let result = try proctorctl(["check", "--policy", file, "a.b", "launch", "--json"])
        #expect(result.status == 2)
        #expect(result.output == "")
        #expect(result.error.hasPrefix("\(file):1:"))
        let missing = try proctorctl(["check", "--policy", directory.path + "/none", "a.b", "launch"])
        #expect(missing.status == 2)
    }
}
