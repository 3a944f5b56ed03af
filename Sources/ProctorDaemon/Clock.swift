import Glibc
import LinuxIO
import ProctorProtocol
import ProctorStore

/// Wall-clock time as the store keeps it and as the interfaces show it.
enum Clock {
    /// Milliseconds since the Unix epoch, now.
    static func now() -> UnixMilliseconds {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return UnixMilliseconds(time.tv_sec) * 1000 + UnixMilliseconds(time.tv_nsec / 1_000_000)
    }

    /// Monotonic microseconds, for uptime.
    static func monotonicMicroseconds() -> UInt64 { MonotonicClock.microseconds() }

    /// RFC 3339 in UTC with milliseconds: `2026-11-29T12:00:00.123Z`.
    static func rfc3339(_ milliseconds: UnixMilliseconds) -> String { RFC3339.string(milliseconds: milliseconds) }
}
