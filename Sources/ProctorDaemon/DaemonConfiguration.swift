import Glibc
import ProctorPolicy

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
    /// The largest message on the Agent socket (apps send small calls). The Admin socket's
    /// limit is `PolicyLimits.maxRequestBytes`: it must take a whole policy document.
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
          --max-connections N     concurrent client connections (default: 4096)
          --max-message-bytes N   largest Varlink message accepted on the Agent socket
                                  (default: 1048576); the Admin socket takes a policy
                                  document and its envelope: \(PolicyLimits.maxRequestBytes)
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
            case "--max-message-bytes": config.maxMessageBytes = try count(for: argument, minimum: 1024)
            case "--message-timeout": config.idleMessageTimeoutSeconds = try count(for: argument)
            case "--history-limit": config.historyLimit = try count(for: argument)
            default: throw UsageError(description: "unknown option \"\(argument)\" (see proctord --help)")
            }
        }
        return .run(config)
    }
}
