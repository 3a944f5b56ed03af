import CSystemd
import Glibc

/// The `FIELD=value` entries of one journal record, in one buffer, ready for
/// `sd_journal_sendv`. Values may hold any bytes, newlines included: the native protocol
/// carries them length-prefixed.
struct JournalRecord {
    /// Every entry's bytes, back to back.
    private(set) var bytes: [UInt8] = []
    /// Where each entry starts in `bytes` and how long it is.
    private(set) var entries: [(offset: Int, count: Int)] = []

    init(_ event: LogEvent, syslogIdentifier: String) {
        append("MESSAGE", event.message)
        append("MESSAGE_ID", event.messageID.description)
        append("PRIORITY", String(event.priority.rawValue))
        append("SYSLOG_IDENTIFIER", syslogIdentifier)
        for (name, value) in event.fields { append(name, value) }
    }

    private mutating func append(_ name: String, _ value: String) {
        let offset = bytes.count
        bytes.append(contentsOf: name.utf8)
        bytes.append(UInt8(ascii: "="))
        bytes.append(contentsOf: value.utf8)
        entries.append((offset, bytes.count - offset))
    }

    /// Each entry as text, for inspection.
    var assignments: [String] {
        entries.map { String(decoding: bytes[$0.offset ..< $0.offset + $0.count], as: UTF8.self) }
    }

    /// Sends the record with one `sd_journal_sendv` call; returns its result (≥ 0, or a negative errno).
    func send() -> Int32 {
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return -EINVAL }
            var vectors = entries.map { entry in
                iovec(iov_base: UnsafeMutableRawPointer(mutating: base + entry.offset), iov_len: entry.count)
            }
            return vectors.withUnsafeMutableBufferPointer { iovecs in
                sd_journal_sendv(iovecs.baseAddress, Int32(iovecs.count))
            }
        }
    }
}
