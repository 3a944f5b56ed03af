import CSystemd
import Glibc

/// Tells the service manager about the process's state (`sd_notify(3)`).
/// Outside systemd (`NOTIFY_SOCKET` unset) every call is a successful no-op.
public struct SystemdNotifier: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let errno: Int32
        public var description: String { "sd_notify failed: \(String(cString: strerror(errno)))" }
    }

    public init() {}

    /// Whether a service manager listens (`NOTIFY_SOCKET` is set).
    public var isEnabled: Bool { getenv("NOTIFY_SOCKET") != nil }

    /// Sends `assignments` (`READY=1`, `STATUS=…`) as one datagram.
    /// Returns false when no service manager listens.
    @discardableResult
    public func notify(_ assignments: [String]) throws(Failure) -> Bool {
        let result = sd_notify(0, assignments.joined(separator: "\n"))
        if result < 0 { throw Failure(errno: -result) }
        return result > 0
    }

    /// The interval at which the service manager expects `WATCHDOG=1`, halved as
    /// `sd_watchdog_enabled(3)` recommends; nil when no watchdog is armed for this process.
    public func watchdogPingInterval() throws(Failure) -> Duration? {
        var usec: UInt64 = 0
        let result = sd_watchdog_enabled(0, &usec)
        if result < 0 { throw Failure(errno: -result) }
        guard result > 0, usec > 0 else { return nil }
        return .microseconds(Int64(usec / 2))
    }
}
