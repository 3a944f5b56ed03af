import Glibc
import ProctorPolicy
import ProctorStore

/// Where proctord finds its policy, keeps its state and puts its sockets, and the limits
/// it enforces, from the command line, then the environment systemd sets, then defaults.
public struct DaemonConfiguration: Sendable, Equatable {
    public enum LogTarget: String, Sendable { case auto, journal, stderr }

    /// Holds `policy.d/`.
    public var configDirectory = "/etc/proctor"
    public var stateDirectory = "/var/lib/proctor"
    public var runtimeDirectory = "/run/proctor"
    public var logTarget = LogTarget.auto
    public var debugLogging = false
    /// Members of this group (and root) may use the Admin interface.
    public var adminGroup = "proctor-admin"
    public var maxConnections = 4096
    /// Most connections one uid may hold on each socket (root and the admin group excepted).
    public var maxConnectionsPerUID = 64
    /// Connections of each socket only root and the admin group may take.
    public var reservedConnections = 64
    /// How long an Agent connection may stay open without registering an app.
    public var registerTimeoutSeconds = 10
    /// Most bytes of replies waiting, across all connections, for clients that do not read.
    public var outputBudgetBytes = 64 << 20
    /// The largest message on the Agent socket (apps send small calls). The Admin socket's
    /// limit is `PolicyLimits.maxRequestBytes`: it must take a whole policy document.
    public var maxMessageBytes = 1 << 20
    /// How long a connection may hold half a message before it is closed.
    public var idleMessageTimeoutSeconds = 10
    public var historyLimit = 20
    /// systemd's `$CREDENTIALS_DIRECTORY`: where the decrypted `machine-key` credential is,
    /// when the unit loads one (`LoadCredentialEncrypted=`), and proctord.conf's `@NAME` client
    /// certificate and key (`LoadCredential=`).
    public var credentialsDirectory: String?
    /// Events kept in the event history (`Admin.EventHistory`), at most.
    public var eventHistoryLimit = 100_000
    /// How long an event stays in the history, in seconds (whichever limit leaves fewer).
    public var eventHistoryAgeSeconds = 30 * 86_400
    /// How long after a retirement's or a violation's shred failed it is first tried again
    /// (`Daemon.shredRetryMaxInterval`); no option sets it: tests shorten it.
    var shredRetryInterval: Duration = .seconds(1)

    var eventRetention: EventRetention {
        EventRetention(maxCount: eventHistoryLimit, maxAge: Int64(eventHistoryAgeSeconds) * 1000)
    }

    public var policyDirectory: String { configDirectory + "/policy.d" }
    /// Where signed policy comes from and whether it is required (docs/fleet.md).
    public var fleetConfigurationPath: String { configDirectory + "/proctord.conf" }
    /// The public keys trusted to sign bundles, `*.pub`.
    public var trustedKeysDirectory: String { configDirectory + "/keys.d" }
    public var agentSocketPath: String { runtimeDirectory + "/io.proctor.Agent" }
    public var adminSocketPath: String { runtimeDirectory + "/io.proctor.Admin" }
    public var lockPath: String { runtimeDirectory + "/proctord.lock" }

    public struct UsageError: Error, CustomStringConvertible {
        public let description: String
    }

    public enum Parsed: Sendable, Equatable {
        case run(DaemonConfiguration)
        case help
        case version
    }

    /// One command-line option: its name, the placeholder of its value (nil for a flag),
    /// its lines in `--help`, and what it sets. `--help`, `proctord(8)` and the parser all
    /// read this one table, so an option cannot be accepted without being documented.
    struct Option: Sendable {
        let name: String
        let valueName: String?
        let help: [String]
        let apply: @Sendable (inout DaemonConfiguration, String) throws(UsageError) -> Void

        static func flag(_ name: String, _ help: String..., apply: @escaping @Sendable (inout DaemonConfiguration) -> Void) -> Option {
            Option(name: name, valueName: nil, help: help) { configuration, _ in apply(&configuration) }
        }

        static func text(_ name: String, _ valueName: String, _ help: String...,
                         set: any WritableKeyPath<DaemonConfiguration, String> & Sendable) -> Option {
            Option(name: name, valueName: valueName, help: help) { configuration, value in configuration[keyPath: set] = value }
        }

        static func count(_ name: String, _ valueName: String, minimum: Int = 1, _ help: String...,
                          set: any WritableKeyPath<DaemonConfiguration, Int> & Sendable) -> Option {
            Option(name: name, valueName: valueName, help: help) { configuration, text throws(UsageError) in
                guard let n = Int(text), n >= minimum else {
                    throw UsageError(description: "\(name) expects a whole number ≥ \(minimum), got \"\(text)\"")
                }
                configuration[keyPath: set] = n
            }
        }
    }

    static let options: [Option] = [
        .text("--config-dir", "DIR", "policy from DIR/policy.d/*.json",
              "(default: $CONFIGURATION_DIRECTORY, else /etc/proctor)", set: \.configDirectory),
        .text("--state-dir", "DIR", "SQLite state (default: $STATE_DIRECTORY, else /var/lib/proctor)", set: \.stateDirectory),
        .text("--runtime-dir", "DIR", "sockets and lock file (default: $RUNTIME_DIRECTORY, else /run/proctor)",
              set: \.runtimeDirectory),
        Option(name: "--log-target", valueName: "TARGET", help: ["auto | journal | stderr (default: auto: the journal when",
                                                                "stderr is connected to it, else readable lines on stderr)"]) {
            configuration, text throws(UsageError) in
            guard let target = LogTarget(rawValue: text) else {
                throw UsageError(description: "--log-target expects auto, journal or stderr, got \"\(text)\"")
            }
            configuration.logTarget = target
        },
        .flag("--debug", "also log allowed decisions and other debug events") { $0.debugLogging = true },
        .text("--admin-group", "NAME", "group whose members may use the Admin interface",
              "(default: proctor-admin; root always may)", set: \.adminGroup),
        .count("--max-connections", "N", "concurrent client connections per socket (default: 4096)",
               set: \.maxConnections),
        .count("--max-connections-per-uid", "N", "connections one user may hold per socket; root and the",
               "admin group are exempt (default: 64)", set: \.maxConnectionsPerUID),
        .count("--reserved-connections", "N", minimum: 0, "connections per socket kept for root and the admin group",
               "(default: 64)", set: \.reservedConnections),
        .count("--register-timeout", "S", "seconds an Agent connection may stay open without",
               "registering an app before it is closed (default: 10)", set: \.registerTimeoutSeconds),
        .count("--output-budget", "BYTES", minimum: 1 << 20, "replies kept, in all, for clients that do not read them;",
               "past it the client furthest behind is disconnected (default: 67108864)", set: \.outputBudgetBytes),
        .count("--max-message-bytes", "N", minimum: 1024, "largest Varlink message accepted on the Agent socket",
               "(default: 1048576); the Admin socket takes a policy", "document and its envelope: \(PolicyLimits.maxRequestBytes)",
               set: \.maxMessageBytes),
        .count("--message-timeout", "S", "seconds a client may leave a message half-sent before",
               "its connection is closed (default: 10)", set: \.idleMessageTimeoutSeconds),
        .count("--history-limit", "N", "applied policies kept for rollback (default: 20)", set: \.historyLimit),
        .count("--event-history-limit", "N", "events kept in the event history (proctorctl events)",
               "(default: 100000)", set: \.eventHistoryLimit),
        Option(name: "--event-history-age", valueName: "AGE", help: ["how long events stay in the history: seconds, or a",
                                                                    "number with s, m, h or d (default: 30d); the",
                                                                    "history keeps what both limits allow"]) {
            configuration, text throws(UsageError) in
            guard let seconds = parseAge(text) else {
                throw UsageError(description: "--event-history-age expects a duration such as 3600, 90m, 12h or 30d, got \"\(text)\"")
            }
            configuration.eventHistoryAgeSeconds = seconds
        },
    ]

    /// `3600`, `90m`, `12h`, `30d` in seconds (at least 1), or nil.
    static func parseAge(_ text: String) -> Int? {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        let (digits, unit) = text.last.flatMap { units[$0] }.map { (text.dropLast(), $0) } ?? (Substring(text), 1)
        guard let number = Int(digits), number >= 1, number <= Int(Int32.max) else { return nil }
        return number * unit
    }

    /// What `-h`/`--help` and `--version` stand for in the usage; parsed before the table.
    static let informational = [("-h, --help", "show this help"), ("--version", "show the version")]

    public static var usage: String {
        var lines = [
            "Usage: proctord [OPTIONS]",
            "",
            "The Proctor policy daemon: holds the device's app policy, answers managed apps on",
            "the io.proctor.Agent socket and administrators on io.proctor.Admin, keeps durable",
            "state in SQLite and logs every decision-worthy event to the journal.",
            "",
            "Options:",
        ]
        let column = 24
        func entry(_ term: String, _ help: [String]) {
            let padded = term + String(repeating: " ", count: max(1, column - term.count))
            lines.append("  " + padded + (help.first ?? ""))
            for more in help.dropFirst() { lines.append(String(repeating: " ", count: column + 2) + more) }
        }
        for option in options { entry(option.name + (option.valueName.map { " " + $0 } ?? ""), option.help) }
        for (term, help) in informational { entry(term, [help]) }
        lines += [
            "",
            "Signals: SIGHUP reloads policy.d; SIGTERM and SIGINT stop cleanly.",
            "Exit status: 0 after a clean stop, 1 when start-up fails, 2 on a usage error,",
            "78 when no valid policy can be loaded (proctord.service does not restart on it).",
        ]
        return lines.joined(separator: "\n")
    }

    /// Parses `arguments` (without the program name); `environment` supplies systemd's
    /// `CONFIGURATION_DIRECTORY`, `STATE_DIRECTORY` and `RUNTIME_DIRECTORY` (the first
    /// path of each, as systemd may list several separated by colons).
    public static func parse(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Parsed {
        var config = DaemonConfiguration()
        func firstPath(_ name: String) -> String? {
            environment[name].flatMap { $0.split(separator: ":").first.map(String.init) }
        }
        if let dir = firstPath("CONFIGURATION_DIRECTORY") { config.configDirectory = dir }
        if let dir = firstPath("STATE_DIRECTORY") { config.stateDirectory = dir }
        if let dir = firstPath("RUNTIME_DIRECTORY") { config.runtimeDirectory = dir }
        if let dir = environment["CREDENTIALS_DIRECTORY"], !dir.isEmpty { config.credentialsDirectory = dir }

        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "-h", "--help": return .help
            case "--version": return .version
            default:
                guard let option = options.first(where: { $0.name == argument }) else {
                    throw UsageError(description: "unknown option \"\(argument)\" (see proctord --help)")
                }
                var value = ""
                if option.valueName != nil {
                    guard let given = remaining.popFirst(), !given.hasPrefix("--") else {
                        throw UsageError(description: "\(argument) needs a value")
                    }
                    value = given
                }
                try option.apply(&config, value)
            }
        }
        return .run(config)
    }
}
