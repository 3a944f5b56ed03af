/// Bounds how many refusals proctord logs per user, so one unprivileged user refused in a
/// loop (connections at its limit, `Register` calls it may not make) cannot crowd real
/// events out of the journal, nor push journald's own rate limit into dropping the denials
/// of registered apps, which are never limited.
///
/// Each uid may have `burst` refusals logged per window; the rest are counted, and the
/// count is reported in one line ("N more refusals for uid U suppressed"): by `expire(now:)`
/// once the window has passed (so a flood that stopped is still reported), or with the
/// uid's next logged refusal. A value type that takes the time and returns what to do, so it
/// tests without a clock or a logger.
struct RefusalLogLimiter {
    /// What to do with one refusal.
    enum Admission: Equatable {
        /// Log it; `suppressedBefore` refusals of this uid went unlogged since the last report
        /// (report them first).
        case log(suppressedBefore: Int)
        /// Count it without logging.
        case suppress
    }

    /// Refusals of one uid that were not logged, ready to be reported in one line.
    struct Suppressed: Equatable {
        let uid: UInt32
        let count: Int
    }

    private struct Window {
        var startedAt: UInt64
        var logged: Int
        var suppressed: Int
    }

    let burst: Int
    /// The length of a window, in monotonic nanoseconds.
    let window: UInt64
    /// Most uids tracked at once; past it the oldest windows are reported and forgotten, so
    /// the table itself stays bounded.
    let maxTrackedUIDs: Int
    private var windows: [UInt32: Window] = [:]

    init(burst: Int = 10, window: Duration = .seconds(10), maxTrackedUIDs: Int = 1024) {
        let (seconds, attoseconds) = window.components
        self.window = UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
        precondition(burst > 0 && self.window > 0 && maxTrackedUIDs > 0)
        self.burst = burst
        self.maxTrackedUIDs = maxTrackedUIDs
    }

    /// Whether the refusal of a caller running as `uid` at `now` (monotonic nanoseconds) is logged.
    mutating func admit(uid: UInt32, now: UInt64) -> Admission {
        if var current = windows[uid], now &- current.startedAt < window {
            if current.logged < burst {
                current.logged += 1
                windows[uid] = current
                return .log(suppressedBefore: 0)
            }
            current.suppressed += 1
            windows[uid] = current
            return .suppress
        }
        let carried = windows[uid]?.suppressed ?? 0
        windows[uid] = Window(startedAt: now, logged: 1, suppressed: 0)
        return .log(suppressedBefore: carried)
    }

    /// Ends every window older than the window length (and, past `maxTrackedUIDs`, the
    /// oldest ones) and returns what each suppressed, so a flood that stopped is still
    /// reported. Call it periodically while `isIdle` is false.
    mutating func expire(now: UInt64) -> [Suppressed] {
        var reports: [Suppressed] = []
        for (uid, current) in windows where now &- current.startedAt >= window {
            windows[uid] = nil
            if current.suppressed > 0 { reports.append(Suppressed(uid: uid, count: current.suppressed)) }
        }
        if windows.count > maxTrackedUIDs {
            let oldest = windows.sorted { $0.value.startedAt < $1.value.startedAt }.prefix(windows.count - maxTrackedUIDs)
            for (uid, current) in oldest {
                windows[uid] = nil
                if current.suppressed > 0 { reports.append(Suppressed(uid: uid, count: current.suppressed)) }
            }
        }
        return reports.sorted { $0.uid < $1.uid }
    }

    /// Whether no window is open (the caller may stop its expiry timer).
    var isIdle: Bool { windows.isEmpty }
}
