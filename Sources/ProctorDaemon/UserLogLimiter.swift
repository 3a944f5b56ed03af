/// Bounds how many lines of one kind proctord logs per user, and in all, so that a user who
/// makes proctord log in a loop — connections or registrations refused, or a registered app
/// denied — cannot crowd real events out of the journal. Nor can it push journald's own rate
/// limit (per service and priority, 10 000 lines per 30 s by default) into dropping proctord's
/// other lines of the same priority: a flood of denials used to hide the refusals that came
/// after it.
///
/// Each uid may have `burst` lines logged per window, and all uids together `totalBurst`
/// (one user can be many uids: a user namespace maps thousands); the rest are counted, and
/// the count is reported in one line per uid ("N more … for uid U suppressed"): by
/// `expire(now:)` once the window has passed (so a flood that stopped is still reported), or
/// with the uid's next logged line. A value type that takes the time and returns what to do,
/// so it tests without a clock or a logger.
struct UserLogLimiter {
    /// What to do with one line.
    enum Admission: Equatable {
        /// Log it; `suppressedBefore` lines of this uid went unlogged since the last report
        /// (report them first).
        case log(suppressedBefore: Int)
        /// Count it without logging.
        case suppress
    }

    /// Lines of one uid that were not logged, ready to be reported in one line.
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
    /// The most lines logged in one window of the machine-wide budget, all uids together.
    let totalBurst: Int
    /// The length of a window, in monotonic nanoseconds.
    let window: UInt64
    /// Most uids tracked at once; past it the oldest windows are reported and forgotten, so
    /// the table itself stays bounded.
    let maxTrackedUIDs: Int
    private var windows: [UInt32: Window] = [:]
    /// The uid asked about last and its window, kept out of `windows` while it is: a user
    /// denied in a loop asks for every denial, and a lookup hashes (≈ 200 instructions).
    private var recentUID: UInt32?
    private var recent = Window(startedAt: 0, logged: 0, suppressed: 0)
    /// The machine-wide budget's window: when it started and what it logged.
    private var total = Window(startedAt: 0, logged: 0, suppressed: 0)

    init(burst: Int, totalBurst: Int, window: Duration = .seconds(10), maxTrackedUIDs: Int = 1024) {
        let (seconds, attoseconds) = window.components
        self.window = UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
        precondition(burst > 0 && totalBurst >= burst && self.window > 0 && maxTrackedUIDs > 0)
        self.burst = burst
        self.totalBurst = totalBurst
        self.maxTrackedUIDs = maxTrackedUIDs
    }

    /// Whether a line about a caller running as `uid` at `now` (monotonic nanoseconds) is
    /// logged. One lookup of the uid: a denial (of a registered app) asks for each one.
    mutating func admit(uid: UInt32, now: UInt64) -> Admission {
        if total.logged == 0 || now &- total.startedAt >= window { total = Window(startedAt: now, logged: 0, suppressed: 0) }
        if recentUID != uid {
            storeRecent()
            recent = windows.removeValue(forKey: uid) ?? Window(startedAt: now, logged: 0, suppressed: 0)
            recentUID = uid
        }
        let admission = Self.admit(to: &recent, now: now, burst: burst, window: window, totalSpent: total.logged >= totalBurst)
        if case .log = admission { total.logged += 1 }
        return admission
    }

    private mutating func storeRecent() {
        if let recentUID { windows[recentUID] = recent }
        recentUID = nil
    }

    private static func admit(to current: inout Window, now: UInt64, burst: Int, window: UInt64, totalSpent: Bool) -> Admission {
        var carried = 0
        if now &- current.startedAt >= window {
            // An ended window that `expire` has not reported yet: its count goes with this one.
            carried = current.suppressed
            current = Window(startedAt: now, logged: 0, suppressed: 0)
        }
        guard current.logged < burst, !totalSpent else {
            current.suppressed += carried + 1
            return .suppress
        }
        current.logged += 1
        return .log(suppressedBefore: carried)
    }

    /// Ends every window older than the window length (and, past `maxTrackedUIDs`, the
    /// oldest ones) and returns what each suppressed, so a flood that stopped is still
    /// reported. Call it periodically while `isIdle` is false.
    mutating func expire(now: UInt64) -> [Suppressed] {
        storeRecent()
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
    var isIdle: Bool { windows.isEmpty && recentUID == nil }
}
