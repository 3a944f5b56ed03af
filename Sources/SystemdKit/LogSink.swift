public import LinuxIO

/// A destination for log events. `Logger` calls `write` from its one background thread,
/// so a sink may block without delaying anyone who logs.
public protocol LogSink: Sendable {
    func write(_ event: LogEvent) throws(LogSinkError)
}

/// Why a sink could not write an event.
public enum LogSinkError: Error, Equatable, CustomStringConvertible {
    /// `sd_journal_sendv` failed (journald not listening, message too large, …).
    case journal(Errno)
    /// `write(2)` to the stream failed.
    case stream(descriptor: CInt, Errno)

    public var description: String {
        switch self {
        case .journal(let errno): "sending to the journal failed: \(errno)"
        case .stream(let descriptor, let errno): "writing log line to descriptor \(descriptor) failed: \(errno)"
        }
    }
}
