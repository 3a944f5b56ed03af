/// The one reader of `CLOCK_MONOTONIC` in the tree: it never goes back and does not count
/// suspend, so it measures timeouts, uptime and `MONOTONIC_USEC=` alike.
public enum MonotonicClock {
    /// Nanoseconds since an arbitrary point fixed at boot.
    public static func nanoseconds() -> UInt64 { Syscall.monotonicNanoseconds() }

    /// Microseconds since the same point (systemd's `MONOTONIC_USEC=` unit).
    public static func microseconds() -> UInt64 { nanoseconds() / 1_000 }
}
