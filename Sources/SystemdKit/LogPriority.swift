/// A syslog priority as the journal's `PRIORITY=` field carries it (`syslog(3)` numbers).
/// Ordered by severity: `.debug < .info < … < .emergency`.
public enum LogPriority: Int32, Sendable, CaseIterable, Comparable, CustomStringConvertible {
    case emergency = 0
    case alert = 1
    case critical = 2
    case error = 3
    case warning = 4
    case notice = 5
    case info = 6
    case debug = 7

    /// More severe compares greater (a lower syslog number).
    public static func < (lhs: LogPriority, rhs: LogPriority) -> Bool { lhs.rawValue > rhs.rawValue }

    /// The short name used by `journalctl -p` and in stderr lines (`warning`, `err`, …).
    public var description: String {
        switch self {
        case .emergency: "emerg"
        case .alert: "alert"
        case .critical: "crit"
        case .error: "err"
        case .warning: "warning"
        case .notice: "notice"
        case .info: "info"
        case .debug: "debug"
        }
    }
}
