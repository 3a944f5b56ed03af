import Foundation
@testable import ProctorDaemon
import Testing

@Suite struct DaemonConfigurationTests {
    private func parsed(_ arguments: [String], environment: [String: String] = [:]) throws -> DaemonConfiguration {
        guard case .run(let configuration) = try DaemonConfiguration.parse(arguments, environment: environment) else {
            Issue.record("expected a configuration to run with")
            return DaemonConfiguration()
        }
        return configuration
    }

    private func usageError(_ arguments: [String]) -> String? {
        do {
            _ = try DaemonConfiguration.parse(arguments, environment: [:])
            return nil
        } catch {
            return error.description
        }
    }

    @Test func defaultsAreTheInstalledPaths() throws {
        let configuration = try parsed([])
        #expect(configuration.policyDirectory == "/etc/proctor/policy.d")
        #expect(configuration.stateDirectory == "/var/lib/proctor")
        #expect(configuration.agentSocketPath == "/run/proctor/io.proctor.Agent")
        #expect(configuration.adminSocketPath == "/run/proctor/io.proctor.Admin")
        #expect(configuration.lockPath == "/run/proctor/proctord.lock")
        #expect(configuration.logTarget == .auto)
        #expect(configuration.historyLimit == 20)
        #expect(configuration.idleMessageTimeoutSeconds == 10)
        #expect(!configuration.debugLogging)
    }

    @Test func systemdDirectoriesComeFromTheEnvironmentFirstPathOnly() throws {
        let configuration = try parsed([], environment: [
            "CONFIGURATION_DIRECTORY": "/etc/proctor:/etc/proctor-extra",
            "STATE_DIRECTORY": "/var/lib/proctor-a:/var/lib/other",
            "RUNTIME_DIRECTORY": "/run/proctor-a",
        ])
        #expect(configuration.configDirectory == "/etc/proctor")
        #expect(configuration.stateDirectory == "/var/lib/proctor-a")
        #expect(configuration.runtimeDirectory == "/run/proctor-a")
    }

    @Test func theCommandLineWinsOverTheEnvironment() throws {
        let configuration = try parsed(
            ["--state-dir", "/tmp/state", "--config-dir", "/tmp/config", "--runtime-dir", "/tmp/run",
             "--log-target", "stderr", "--debug", "--admin-group", "wheel", "--max-connections", "8",
             "--max-message-bytes", "4096", "--message-timeout", "2", "--history-limit", "3",
             "--max-connections-per-uid", "4", "--reserved-connections", "0", "--register-timeout", "5",
             "--output-budget", "2097152"],
            environment: ["STATE_DIRECTORY": "/var/lib/proctor-a", "RUNTIME_DIRECTORY": "/run/proctor-a"])
        var expected = DaemonConfiguration()
        expected.stateDirectory = "/tmp/state"
        expected.configDirectory = "/tmp/config"
        expected.runtimeDirectory = "/tmp/run"
        expected.logTarget = .stderr
        expected.debugLogging = true
        expected.adminGroup = "wheel"
        expected.maxConnections = 8
        expected.maxMessageBytes = 4096
        expected.idleMessageTimeoutSeconds = 2
        expected.historyLimit = 3
        expected.maxConnectionsPerUID = 4
        expected.reservedConnections = 0
        expected.registerTimeoutSeconds = 5
        expected.outputBudgetBytes = 2 << 20
        #expect(configuration == expected)
    }

    @Test func helpAndVersionStopParsing() throws {
        #expect(try DaemonConfiguration.parse(["--state-dir", "/x", "--help", "--bogus"], environment: [:]) == .help)
        #expect(try DaemonConfiguration.parse(["-h"], environment: [:]) == .help)
        #expect(try DaemonConfiguration.parse(["--version"], environment: [:]) == .version)
    }

    @Test func badArgumentsNameTheOptionAndWhatWasExpected() {
        #expect(usageError(["--state-dir"]) == "--state-dir needs a value")
        #expect(usageError(["--state-dir", "--debug"]) == "--state-dir needs a value")
        #expect(usageError(["--log-target", "syslog"]) == "--log-target expects auto, journal or stderr, got \"syslog\"")
        #expect(usageError(["--history-limit", "0"]) == "--history-limit expects a whole number ≥ 1, got \"0\"")
        #expect(usageError(["--max-connections", "many"]) == "--max-connections expects a whole number ≥ 1, got \"many\"")
        #expect(usageError(["--max-message-bytes", "100"]) == "--max-message-bytes expects a whole number ≥ 1024, got \"100\"")
        #expect(usageError(["--output-budget", "1000"]) == "--output-budget expects a whole number ≥ 1048576, got \"1000\"")
        #expect(usageError(["--message-timeout", "-1"]) == "--message-timeout expects a whole number ≥ 1, got \"-1\"")
        #expect(usageError(["--statedir", "/x"]) == "unknown option \"--statedir\" (see proctord --help)")
        #expect(usageError(["/var/lib/proctor"]) == "unknown option \"/var/lib/proctor\" (see proctord --help)")
    }

    @Test func usageNamesEveryOptionTheParserAccepts() throws {
        #expect(DaemonConfiguration.options.count == 16)
        for option in DaemonConfiguration.options {
            #expect(DaemonConfiguration.usage.contains("\n  " + option.name + (option.valueName.map { " " + $0 } ?? "") + " "),
                     "usage lacks \(option.name)")
            // Known to the parser: a value it dislikes is an error about the value, not the option.
            let arguments = [option.name] + (option.valueName == nil ? [] : ["4096"])
            #expect(usageError(arguments).map { !$0.hasPrefix("unknown option") } ?? true, "\(option.name) is not accepted")
        }
        for option in ["-h, --help", "--version"] { #expect(DaemonConfiguration.usage.contains("\n  " + option + " ")) }
    }

    /// proctord(8) is written by hand from the same table: each option is a term of its OPTIONS.
    @Test func theManualPageDescribesEveryOption() throws {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("man/proctord.8.scd")
        let lines = try String(contentsOf: source, encoding: .utf8).split(separator: "\n").map(String.init)
        for option in DaemonConfiguration.options {
            let term = "*" + option.name + "*" + (option.valueName.map { " _" + $0 + "_" } ?? "")
            #expect(lines.contains(term), "man/proctord.8.scd lacks the term \(term)")
        }
        #expect(lines.contains("*-h*, *--help*") && lines.contains("*--version*"))
    }
}
