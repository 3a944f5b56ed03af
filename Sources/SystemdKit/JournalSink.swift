import Glibc
import LinuxIO

/// Writes events to journald through its native protocol (`sd_journal_sendv(3)`), so every
/// field arrives as a structured journal field: `MESSAGE`, `MESSAGE_ID`, `PRIORITY`,
/// `SYSLOG_IDENTIFIER` and the event's own fields.
public struct JournalSink: LogSink {
    /// The `SYSLOG_IDENTIFIER=` of every record (`journalctl -t` selects on it).
    public let syslogIdentifier: String
    /// Where journald listens for native-protocol records.
    let socketPath: String

    public init(syslogIdentifier: String) {
        self.init(syslogIdentifier: syslogIdentifier, socketPath: "/run/systemd/journal/socket")
    }

    init(syslogIdentifier: String, socketPath: String) {
        self.syslogIdentifier = syslogIdentifier
        self.socketPath = socketPath
    }

    /// Sends one record; throws when journald does not take it, including when it is not
    /// running: libsystemd reports success when the socket is missing ("fail silently"),
    /// so the sink checks for the socket itself after a send that claims success.
    public func write(_ event: LogEvent) throws(LogSinkError) {
        let result = JournalRecord(event, syslogIdentifier: syslogIdentifier).send()
        if result < 0 { throw .journal(Errno(rawValue: -result)) }
        if access(socketPath, F_OK) != 0 { throw .journal(.current) }
    }
}
