import Glibc
import LinuxIO
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
    static func rfc3339(_ milliseconds: UnixMilliseconds) -> String {
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))."
            + "\(pad(Int32(milliseconds % 1000), 3))Z"
    }
}
