import ProctorCTL
import Testing

/// Manuals and usage errors of the built binary.
@Suite struct HelpAndUsageTests {
    static let commands = ProctorCTL.verbs.map { $0.words.joined(separator: " ") }

    @Test(arguments: commands)
    func everyCommandPrintsItsManualWithHelpAndThroughHelp(_ command: String) throws {
        let verb = try #require(ProctorCTL.verbs.first { $0.words.joined(separator: " ") == command })
        let words = command.split(separator: " ").map(String.init)
        let result = try proctorctl(words + ["--help"])
        #expect(result.status == 0)
        #expect(result.error == "")
        #expect(result.output == verb.manual + "\n")
        for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "EXAMPLES"] {
            #expect(result.outputLines.contains(section), "\(command) --help lacks \(section)")
        }
        #expect(result.outputLines[1] == "    proctorctl \(command) - \(verb.summary)")
        // Prose is wrapped at 80 columns; only example command lines may be longer.
        for line in result.outputLines where !line.hasPrefix("    $ ") {
            #expect(line.count <= 80, "\(command): \(line)")
        }
        #expect(try proctorctl(["help"] + words).output == result.output)
        #expect(try proctorctl(words + ["-h"]).output == result.output)
    }

    @Test(arguments: commands)
    func everyCommandDocumentsItsExitStatuses(_ command: String) throws {
        let verb = try #require(ProctorCTL.verbs.first { $0.words.joined(separator: " ") == command })
        let statuses = verb.exitStatuses.map(\.0.rawValue)
        #expect(statuses.contains(0) && statuses.contains(2))
        if verb.options.contains(where: { $0.name == "--address" }) {
            #expect(statuses.contains(3) && statuses.contains(4), "\(command) talks to proctord")
            #expect(verb.options.contains { $0.name == "--json" })
        }
    }

    @Test func theOverviewListsEveryCommandAndTheExitStatuses() throws {
        let result = try proctorctl(["--help"])
        #expect(result.status == 0)
        for command in Self.commands {
            #expect(result.outputLines.contains { $0.hasPrefix("  \(command) ") }, "overview lacks \(command)")
        }
        #expect(result.output.split(separator: "\n").joined(separator: " ").contains(
            "Exit status: 0 success, 1 denied or different, 2 bad input or usage, 3 proctord not reachable, "
                + "4 proctord refused the request."))
        let bare = try proctorctl([])
        #expect(bare.status == 2)
        #expect(bare.output == "")
        #expect(bare.error == result.output)
    }

    @Test(arguments: [
        (["stauts"], "proctorctl: unknown command 'stauts', did you mean 'status'?"),
        (["policy", "shwo"], "proctorctl: unknown command 'policy shwo', did you mean 'policy show'?"),
        (["--jsn", "status"], "proctorctl: unknown option \"--jsn\", did you mean \"--json\"?"),
        (["--size", "3", "check"], "proctorctl: unknown option \"--size\""),
        (["--json"], "proctorctl: a command must follow the options"),
        (["--address"], "proctorctl: option --address needs a value: --address PATH"),
        (["--generate", "pdf"], "proctorctl: --generate makes man, not \"pdf\""),
    ])
    func unknownCommandsAreUsageErrors(_ arguments: [String], _ message: String) throws {
        let result = try proctorctl(arguments)
        #expect(result.status == 2)
        #expect(result.output == "")
        #expect(result.error == message + "\nTry 'proctorctl --help'.\n")
    }

    @Test(arguments: [
        (["check", "com.example.notes"], "expected 2 to 3 arguments (APP ACTION [TARGET]), found 1"),
        (["check", "com.example.notes", "clipboard.cpy"], "unknown action \"clipboard.cpy\", did you mean \"clipboard.copy\"?"),
        (["check", "com.example.notes", "fly"], "unknown action \"fly\", expected one of launch, clipboard.copy, "
            + "clipboard.paste, share.send, share.receive, print, screen-capture, file.export, notification"),
        (["check", "a.b", "clipboard.copy", "--size", "-3"], "--size must be a whole number of characters, 0 or more; found \"-3\""),
        (["check", "a.b", "launch", "--app-version", "two"], "--app-version must be a semantic version such as 2.4.0; found \"two\""),
        (["check", "a.b", "launch", "--policy", "config/examples", "--address", "/tmp/x"],
         "--policy decides offline and --address asks proctord: give only one"),
        (["notify", "a.b", "[1]"], "the payload JSON must be a JSON object, found an array"),
        (["notify", "a.b", "{"], "the payload JSON is not valid JSON: line 1, column 2: unexpected end of input: expected a key or '}'"),
        (["events", "--kind", "decision,weather"], "unknown event kind \"weather\", expected one of decision, lifecycle, "
            + "denial, registration, policy, wipe, feedback, notification, compliance, dataKey, enforcement"),
        (["events", "-n", "-1"], "--lines must be a whole number from 0 to 10000; found \"-1\""),
        (["events", "--since", "last tuesday"], "--since expects a time such as 2026-11-29 14:00, -1h, today or "
            + "2026-11-29T14:00:00Z; found \"last tuesday\""),
        (["events", "--follow", "--until", "-1h"], "--until cannot be combined with --follow: new events occur after any --until"),
        (["events", "-o", "yaml"], "--output expects short or json; found \"yaml\""),
        (["notify", "a.b", "{}", "--ttl", "31d"], "--ttl must be a duration such as 90s, 30m, 24h or 7d, of at most 30d; found \"31d\""),
        (["notify", "a.b", "{}", "--ttl", "1.5h"], "--ttl must be a duration such as 90s, 30m, 24h or 7d, of at most 30d; found \"1.5h\""),
        (["status", "--jsn"], "unknown option \"--jsn\", did you mean \"--json\"?"),
        (["status", "extra"], "expected 0 arguments (), found 1"),
        (["policy", "apply"], "expected 1 argument (FILE), found 0"),
        (["apps", "--address"], "option --address needs a value: --address PATH"),
    ])
    func badCommandLinesAreUsageErrorsBeforeAnythingIsSent(_ arguments: [String], _ message: String) throws {
        // The address exists nowhere: a usage error must come before any attempt to connect.
        let result = try proctorctl(arguments, environment: ["PROCTOR_ADMIN_SOCKET": "/nonexistent/admin"])
        let verb = try #require(ProctorCTL.verbs.filter { arguments.starts(with: $0.words) }.max { $0.words.count < $1.words.count })
        #expect(result.status == 2)
        #expect(result.output == "")
        #expect(result.error == "\(verb.commandLine): \(message)\nUsage: \(verb.synopsis)\nTry '\(verb.commandLine) --help'.\n")
    }
}
