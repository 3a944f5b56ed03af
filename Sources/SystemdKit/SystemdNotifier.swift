import CSystemd
import Glibc
public import LinuxIO

/// Tells the service manager about the process's state (`sd_notify(3)`).
/// Outside systemd (`NOTIFY_SOCKET` unset) every call is a successful no-op that returns false.
public struct SystemdNotifier: Sendable {
    public struct Failure: Error, Equatable, CustomStringConvertible {
        /// What `sd_notify`/`sd_watchdog_enabled` reported.
        public let errno: Errno
        public init(errno: Errno) { self.errno = errno }
        public var description: String { "sd_notify failed: \(errno)" }
    }

    public init() {}

    /// Whether a service manager listens (`NOTIFY_SOCKET` is set).
    public var isEnabled: Bool { getenv("NOTIFY_SOCKET") != nil }

    /// Sends `assignments` (`READY=1`, `STATUS=…`) as one datagram.
    /// Returns false when no service manager listens.
    @discardableResult
    public func notify(_ assignments: [String]) throws(Failure) -> Bool {
        let result = sd_notify(0, assignments.joined(separator: "\n"))
        if result < 0 { throw Failure(errno: Errno(rawValue: -result)) }
        return result > 0
    }

    /// Start-up is complete (policy loaded, sockets listening): `READY=1` with the status line.
    @discardableResult
    public func ready(status: String) throws(Failure) -> Bool {
        try notify(Self.readyAssignments(status: status))
    }

    /// A new status line for `systemctl status`.
    @discardableResult
    public func status(_ text: String) throws(Failure) -> Bool {
        try notify([Self.statusAssignment(text)])
    }

    /// A reload begins: `RELOADING=1` with the `MONOTONIC_USEC=` systemd ≥ 253 requires
    /// (older ones ignore it). Send `ready(status:)` when the reload is done, whatever its outcome.
    @discardableResult
    public func reloading(status: String) throws(Failure) -> Bool {
        try notify(Self.reloadingAssignments(status: status, monotonicMicroseconds: MonotonicClock.microseconds()))
    }

    /// Shutdown begins: `STOPPING=1`.
    @discardableResult
    public func stopping(status: String) throws(Failure) -> Bool {
        try notify(["STOPPING=1", Self.statusAssignment(status)])
    }

    /// A fatal start-up failure, sent just before exiting non-zero: `STATUS=` and `ERRNO=`.
    @discardableResult
    public func failed(status: String, errno: Int32) throws(Failure) -> Bool {
        try notify([Self.statusAssignment(status), "ERRNO=\(errno)"])
    }

    /// The watchdog keep-alive, `WATCHDOG=1`; call it from the event loop every `watchdogPingInterval()`.
    @discardableResult
    public func watchdogPing() throws(Failure) -> Bool {
        try notify(["WATCHDOG=1"])
    }

    /// The interval at which the service manager expects `WATCHDOG=1`, halved as
    /// `sd_watchdog_enabled(3)` recommends; nil when no watchdog is armed for this process.
    public func watchdogPingInterval() throws(Failure) -> Duration? {
        var usec: UInt64 = 0
        let result = sd_watchdog_enabled(0, &usec)
        if result < 0 { throw Failure(errno: Errno(rawValue: -result)) }
        guard result > 0, usec > 0 else { return nil }
        return .microseconds(Int64(usec / 2))
    }

    static func readyAssignments(status: String) -> [String] {
        ["READY=1", statusAssignment(status)]
    }

    static func reloadingAssignments(status: String, monotonicMicroseconds: UInt64) -> [String] {
        ["RELOADING=1", "MONOTONIC_USEC=\(monotonicMicroseconds)", statusAssignment(status)]
    }

    /// `STATUS=` with the text on one line: a newline would end the assignment early and
    /// turn the rest into an assignment of its own.
    static func statusAssignment(_ text: String) -> String {
        "STATUS=" + text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }

}
