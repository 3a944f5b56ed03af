import JSONCore
import ProctorPolicy
import Testing

/// The conventions systemctl and git users expect: `--version`, and the options every
/// online command takes also before the command.
@Suite struct GlobalOptionsTests {
    @Test(arguments: [["--version"], ["-V"], ["--json", "--version"], ["-V", "status"]])
    func versionPrintsTheReleaseAndExits(_ arguments: [String]) throws {
        let result = try proctorctl(arguments, environment: ["PROCTOR_ADMIN_SOCKET": "/nonexistent/admin"])
        #expect(result.status == 0)
        #expect(result.output == "proctorctl \(ProctorRelease.version)\n")
        #expect(result.error == "")
    }

    @Test func jsonBeforeTheCommandIsTheCommandsJSON() throws {
        let policy = try AdminFixtures.examplePolicy()
        let server = try FakeAdminServer(replies: ["Status": { _ in AdminFixtures.status(policy) }])
        defer { server.stop() }
        let environment = ["PROCTOR_ADMIN_SOCKET": server.path]
        let before = try proctorctl(["--json", "status"], environment: environment)
        #expect(before.status == 0)
        #expect(before.output == JSONValue.object(AdminFixtures.status(policy)).serializedString() + "\n")
        #expect(try proctorctl(["status", "--json"], environment: environment).output == before.output)
    }

    @Test func addressBeforeTheCommandIsWhereItAsks() throws {
        let server = try FakeAdminServer(replies: ["ListApps": { _ in AdminFixtures.apps }])
        defer { server.stop() }
        // The environment names a socket that does not exist: only the option can succeed.
        let environment = ["PROCTOR_ADMIN_SOCKET": "/nonexistent/admin"]
        let after = try proctorctl(["apps", "--address", server.path], environment: environment)
        #expect(after.status == 0)
        for arguments in [["--address", server.path, "apps"], ["--address=\(server.path)", "apps"],
                          ["--address", "/nonexistent/other", "apps", "--address", server.path],
                          ["--json", "--address", server.path, "apps"]] {
            let result = try proctorctl(arguments, environment: environment)
            #expect(result.status == 0, "\(arguments)")
            #expect(result.output == (arguments.contains("--json")
                ? JSONValue.object(AdminFixtures.apps).serializedString() + "\n" : after.output), "\(arguments)")
        }
        let unreachable = try proctorctl(["--address", "/nonexistent/other", "apps"], environment: environment)
        #expect(unreachable.status == 3)
        #expect(unreachable.error == "proctorctl: proctord is not running at /nonexistent/other\n")
    }

    @Test func anOptionTheCommandDoesNotTakeIsTheCommandsUsageError() throws {
        let result = try proctorctl(["--address", "/tmp/x", "policy", "validate", "config/examples"])
        #expect(result.status == 2)
        #expect(result.error.hasPrefix("proctorctl policy validate: unknown option \"--address\"\n"))
        // -V is --version only before the command.
        let after = try proctorctl(["status", "-V"])
        #expect(after.status == 2)
        #expect(after.error.hasPrefix("proctorctl status: unknown option \"-V\""))
    }

    @Test func theOverviewListsTheOptionsBeforeTheCommand() throws {
        let result = try proctorctl(["--help"])
        #expect(result.outputLines.contains("Usage: proctorctl [OPTIONS] COMMAND [OPTIONS] [ARGUMENTS]"))
        for option in ["--address PATH", "--json", "--version", "--help"] {
            #expect(result.outputLines.contains { $0.hasPrefix("  \(option) ") }, "overview lacks \(option)")
        }
        #expect(try proctorctl(["--json", "--help"]).output == result.output)
        #expect(try proctorctl(["-h"]).output == result.output)
    }
}
