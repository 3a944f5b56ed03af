import Glibc
public import LinuxIO

/// Tells the service manager about the process's state, speaking `sd_notify(3)`'s protocol
/// itself (systemd's docs/NOTIFY.md; no libsystemd): each message is one datagram of
/// newline-separated assignments from a fresh `SOCK_DGRAM` socket to the address in
/// `NOTIFY_SOCKET` (a path, or `@name` in the abstract namespace). The variable is left set.
/// Outside systemd (`NOTIFY_SOCKET` unset) every call is a successful no-op that returns false.
public struct SystemdNotifier: Sendable {
    public struct Failure: Error, Equatable, CustomStringConvertible {
        /// Why the message was not sent (`EAFNOSUPPORT`/`EINVAL`: an address that is neither
        /// a path nor `@name`, or too long; else `sendto(2)`'s), or `EINVAL` for a malformed
        /// `WATCHDOG_USEC`/`WATCHDOG_PID`.
        public let errno: Errno
        public init(errno: Errno) { self.errno = errno }
        public var description: String { "sd_notify failed: \(errno)" }
    }

    public init() {}

    /// Whether a service manager listens (`NOTIFY_SOCKET` is set).
    public var isEnabled: Bool { ServiceManagerEnvironment.value("NOTIFY_SOCKET") != nil }

    /// Sends `assignments` (`READY=1`, `STATUS=…`) as one datagram.
    /// Returns false when no service manager listens.
    @discardableResult
    public func notify(_ assignments: [String]) throws(Failure) -> Bool {
        guard let socketAddress = ServiceManagerEnvironment.value("NOTIFY_SOCKET") else { return false }
        do {
            let address = try UnixSocketAddress(systemdSocket: socketAddress)
            try UnixDatagramSocket().send(Array(assignments.joined(separator: "\n").utf8), to: address)
        } catch {
            throw Failure(errno: error)
        }
        return true
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
        try Self.watchdogPingInterval(timeout: ServiceManagerEnvironment.value("WATCHDOG_USEC"),
                                      processID: ServiceManagerEnvironment.value("WATCHDOG_PID"), ownProcessID: getpid())
    }

    /// `sd_watchdog_enabled(3)` on the variables' values: no `WATCHDOG_USEC`, or a
    /// `WATCHDOG_PID` naming another process, is no watchdog; a timeout that is not a number
    /// from 1 to 2⁶⁴ − 2 µs, or a process id that is not a number, is `EINVAL`.
    static func watchdogPingInterval(timeout: String?, processID: String?, ownProcessID: pid_t) throws(Failure) -> Duration? {
        guard let timeout else { return nil }
        guard let microseconds = ServiceManagerEnvironment.decimal(timeout), microseconds > 0, microseconds < .max else {
            throw Failure(errno: .invalidArgument)
        }
        if let processID {
            guard let watched = ServiceManagerEnvironment.processID(processID) else { throw Failure(errno: .invalidArgument) }
            guard watched == ownProcessID else { return nil }
        }
        return .microseconds(Int64(microseconds / 2))
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
