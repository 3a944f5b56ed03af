import LinuxIO

/// Writes events to journald through its native protocol (`sd_journal_sendv(3)`), so every
/// field arrives as a structured journal field: `MESSAGE`, `MESSAGE_ID`, `PRIORITY`,
/// `SYSLOG_IDENTIFIER` and the event's own fields.
public struct JournalSink: LogSink {
    /// The `SYSLOG_IDENTIFIER=` of every record (`journalctl -t` selects on it).
    public let syslogIdentifier: String

    public init(syslogIdentifier: String) {
        self.syslogIdentifier = syslogIdentifier
    }

    /// Sends one record; throws when journald does not take it (for instance when it is not running).
    public func write(_ event: LogEvent) throws(LogSinkError) {
        let result = JournalRecord(event, syslogIdentifier: syslogIdentifier).send()
        if result < 0 { throw .journal(Errno(rawValue: -result)) }
    }
}
