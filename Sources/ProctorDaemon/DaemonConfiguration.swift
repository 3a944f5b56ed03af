import Glibc

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
    public var maxMessageBytes = 1 << 20
    /// How long a connection may hold half a message before it is closed.
    public var idleMessageTimeoutSeconds = 10
    public var historyLimit = 20

    public var policyDirectory: String { configDirectory + "/policy.d" }
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

    public static let usage = """
        Usage: proctord [OPTIONS]

        The Proctor policy daemon: holds the device's app policy, answers managed apps on
        the io.proctor.Agent socket and administrators on io.proctor.Admin, keeps durable
        state in SQLite and logs every decision-worthy event to the journal.

        Options:
          --config-dir DIR        policy from DIR/policy.d/*.json
                                  (default: $CONFIGURATION_DIRECTORY, else /etc/proctor)
          --state-dir DIR         SQLite state (default: $STATE_DIRECTORY, else /var/lib/proctor)
          --runtime-dir DIR       sockets and lock file (default: $RUNTIME_DIRECTORY, else /run/proctor)
          --log-target TARGET     auto | journal | stderr (default: auto: the journal when
                                  stderr is connected to it, else readable lines on stderr)
          --debug                 also log allowed decisions and other debug events
          --admin-group NAME      group whose members may use the Admin interface
                                  (default: proctor-admin; root always may)
          --max-connections N     concurrent client connections per socket (default: 4096)
          --max-connections-per-uid N
                                  connections one user may hold per socket; root and the
                                  admin group are exempt (default: 64)
          --reserved-connections N
                                  connections per socket kept for root and the admin group
                                  (default: 64)
          --register-timeout S    seconds an Agent connection may stay open without
                                  registering an app before it is closed (default: 10)
          --output-budget BYTES   replies kept, in all, for clients that do not read them;
                                  past it the client furthest behind is disconnected
                                  (default: 67108864)
          --max-message-bytes N   largest Varlink message accepted (default: 1048576)
          --message-timeout S     seconds a client may leave a message half-sent before
                                  its connection is closed (default: 10)
          --history-limit N       applied policies kept for rollback (default: 20)
          -h, --help              show this help
          --version               show the version

        Signals: SIGHUP reloads policy.d; SIGTERM and SIGINT stop cleanly.
        Exit status: 0 after a clean stop, 1 when start-up fails, 2 on a usage error,
        78 when no valid policy can be loaded (proctord.service does not restart on it).
        """

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

        var remaining = arguments[...]
        func value(for option: String) throws(UsageError) -> String {
            guard let value = remaining.popFirst(), !value.hasPrefix("--") else {
                throw UsageError(description: "\(option) needs a value")
            }
            return value
        }
        func count(for option: String, minimum: Int = 1) throws(UsageError) -> Int {
            let text = try value(for: option)
            guard let n = Int(text), n >= minimum else {
                throw UsageError(description: "\(option) expects a whole number ≥ \(minimum), got \"\(text)\"")
            }
            return n
        }
        while let argument = remaining.popFirst() {
            switch argument {
            case "-h", "--help": return .help
            case "--version": return .version
            case "--config-dir": config.configDirectory = try value(for: argument)
            case "--state-dir": config.stateDirectory = try value(for: argument)
            case "--runtime-dir": config.runtimeDirectory = try value(for: argument)
            case "--log-target":
                let text = try value(for: argument)
                guard let target = LogTarget(rawValue: text) else {
                    throw UsageError(description: "--log-target expects auto, journal or stderr, got \"\(text)\"")
                }
                config.logTarget = target
            case "--debug": config.debugLogging = true
            case "--admin-group": config.adminGroup = try value(for: argument)
            case "--max-connections": config.maxConnections = try count(for: argument)
            case "--max-connections-per-uid": config.maxConnectionsPerUID = try count(for: argument)
            case "--reserved-connections": config.reservedConnections = try count(for: argument, minimum: 0)
            case "--register-timeout": config.registerTimeoutSeconds = try count(for: argument)
            case "--output-budget": config.outputBudgetBytes = try count(for: argument, minimum: 1 << 20)
            case "--max-message-bytes": config.maxMessageBytes = try count(for: argument, minimum: 1024)
            case "--message-timeout": config.idleMessageTimeoutSeconds = try count(for: argument)
            case "--history-limit": config.historyLimit = try count(for: argument)
            default: throw UsageError(description: "unknown option \"\(argument)\" (see proctord --help)")
            }
        }
        return .run(config)
    }
}
