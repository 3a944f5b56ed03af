import Glibc

/// The variables through which systemd hands a service its sockets, notification socket and
/// watchdog (`sd_listen_fds(3)`, `sd_notify(3)`, `sd_watchdog_enabled(3)`), read as libsystemd
/// reads them.
enum ServiceManagerEnvironment {
    /// The variable's value, nil when it is unset.
    static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// A decimal number of ASCII digits only (systemd writes them so); nil for anything else.
    static func decimal(_ text: String) -> UInt64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return UInt64(text)
    }

    /// A process id: a decimal number from 1 to `Int32.max` (`LISTEN_PID`, `WATCHDOG_PID`).
    static func processID(_ text: String) -> pid_t? {
        guard let value = decimal(text), value >= 1, value <= UInt64(Int32.max) else { return nil }
        return pid_t(value)
    }
}
