import CLinux
import Glibc
import LinuxIO

/// Writes events to journald through its native protocol, as `sd_journal_sendv(3)` does but
/// without libsystemd, so every field arrives as a structured journal field: `MESSAGE`,
/// `MESSAGE_ID`, `PRIORITY`, `SYSLOG_IDENTIFIER` and the event's own fields.
public struct JournalSink: LogSink {
    /// The `SYSLOG_IDENTIFIER=` of every record (`journalctl -t` selects on it).
    public let syslogIdentifier: String
    /// Where journald listens for native-protocol records, or why that address is unusable.
    private let address: Result<UnixSocketAddress, Errno>
    /// The sink's one socket (libsystemd keeps one for the process too), or why it could not be made.
    private let socket: Result<UnixDatagramSocket, Errno>

    public init(syslogIdentifier: String) {
        self.init(syslogIdentifier: syslogIdentifier, socketAddress: "/run/systemd/journal/socket")
    }

    /// A sink sending to `socketAddress`: a path, or `@name` in the abstract namespace.
    init(syslogIdentifier: String, socketAddress: String) {
        self.syslogIdentifier = syslogIdentifier
        address = Result { () throws(Errno) in try UnixSocketAddress(systemdSocket: socketAddress) }
        socket = Result { () throws(Errno) in try UnixDatagramSocket() }
    }

    /// Sends one record; throws when journald does not take it, including when it is not
    /// running (`ENOENT`, `ECONNREFUSED`), where libsystemd reports success.
    public func write(_ event: LogEvent) throws(LogSinkError) {
        do {
            try send(JournalRecord(event, syslogIdentifier: syslogIdentifier), through: socket.get(), to: address.get())
        } catch {
            throw .journal(error)
        }
    }

    /// One datagram; a record larger than a datagram may be (`EMSGSIZE`; `ENOBUFS` or `EAGAIN`
    /// when the kernel cannot allocate one that large) goes in a sealed memory file, whose
    /// descriptor journald receives instead and reads the record from.
    private func send(_ record: JournalRecord, through socket: UnixDatagramSocket,
                      to address: UnixSocketAddress) throws(Errno) {
        do {
            try socket.send(record.bytes, to: address)
            return
        } catch {
            guard [Errno(rawValue: EMSGSIZE), Errno(rawValue: ENOBUFS), .wouldBlock].contains(error) else { throw error }
        }
        let file = try Self.sealedMemoryFile(holding: record.bytes)
        defer { try? file.close() }
        try socket.send(descriptor: file, to: address)
    }

    /// A memory file holding `bytes` with every seal set: journald takes a passed memory file
    /// only when nobody can change it any more.
    static func sealedMemoryFile(holding bytes: [UInt8]) throws(Errno) -> FileDescriptor {
        let descriptor = clinux_memfd_create_sealable("journal-record")
        guard descriptor >= 0 else { throw .current }
        let file = FileDescriptor(rawValue: descriptor)
        do throws(Errno) {
            try file.writeAll(bytes)
            guard fcntl(descriptor, CLINUX_F_ADD_SEALS, CLINUX_F_SEAL_ALL) == 0 else { throw Errno.current }
            return file
        } catch {
            try? file.close()
            throw error
        }
    }
}
