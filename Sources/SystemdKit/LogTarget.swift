import Glibc

/// Where the process's log goes: the journal's native protocol, or readable lines on stderr.
public enum LogTarget: Sendable, Equatable {
    case journal
    case stderr

    /// The `--log-target=` choices: `auto` detects, the others force a target.
    public enum Setting: String, Sendable, CaseIterable {
        case auto, journal, stderr

        /// The target this setting selects in the current process.
        public func resolve() -> LogTarget {
            switch self {
            case .auto: LogTarget.detect()
            case .journal: .journal
            case .stderr: .stderr
            }
        }
    }

    /// The journal when this process's standard error is connected to journald, which
    /// systemd announces by setting `JOURNAL_STREAM=<st_dev>:<st_ino>` of that stream
    /// (`systemd.exec(5)`); otherwise stderr. A stderr redirected elsewhere since no longer
    /// matches, so its lines go where the redirection points.
    public static func detect() -> LogTarget {
        detect(journalStream: getenv("JOURNAL_STREAM").map { String(cString: $0) }, standardError: STDERR_FILENO)
    }

    /// `detect()` with the environment value and descriptor given.
    public static func detect(journalStream: String?, standardError: CInt) -> LogTarget {
        guard let journalStream, let (device, inode) = parseJournalStream(journalStream) else { return .stderr }
        var status = stat()
        guard fstat(standardError, &status) == 0 else { return .stderr }
        return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode ? .journal : .stderr
    }

    /// A sink writing to this target.
    public func makeSink(syslogIdentifier: String) -> any LogSink {
        switch self {
        case .journal: JournalSink(syslogIdentifier: syslogIdentifier)
        case .stderr: StderrSink()
        }
    }

    /// `"<device>:<inode>"`, both decimal.
    static func parseJournalStream(_ text: String) -> (device: UInt64, inode: UInt64)? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return nil }
        return (device, inode)
    }
}
