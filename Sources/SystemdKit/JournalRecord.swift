/// One journal record in journald's native protocol (systemd's docs/JOURNAL_NATIVE_PROTOCOL.md),
/// the bytes `sd_journal_sendv(3)` would send for the same fields: `NAME=value\n` per field,
/// or, for a value holding a newline, `NAME\n`, the value's length as a 64-bit little-endian
/// number, the value and `\n`. Values may hold any bytes.
struct JournalRecord {
    /// The record as journald reads it from one datagram or a passed memory file.
    private(set) var bytes: [UInt8] = []

    init(_ event: LogEvent, syslogIdentifier: String) {
        append("MESSAGE", event.message)
        append("MESSAGE_ID", event.messageID.description)
        append("PRIORITY", String(event.priority.rawValue))
        append("SYSLOG_IDENTIFIER", syslogIdentifier)
        for (name, value) in event.fields { append(name, value) }
    }

    private mutating func append(_ name: String, _ value: String) {
        bytes.append(contentsOf: name.utf8)
        if value.utf8.contains(UInt8(ascii: "\n")) {
            bytes.append(UInt8(ascii: "\n"))
            withUnsafeBytes(of: UInt64(value.utf8.count).littleEndian) { bytes.append(contentsOf: $0) }
        } else {
            bytes.append(UInt8(ascii: "="))
        }
        bytes.append(contentsOf: value.utf8)
        bytes.append(UInt8(ascii: "\n"))
    }
}
