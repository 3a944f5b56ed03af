/// Decides which refused connections are logged, so a user hammering a full socket cannot
/// flood the journal: the first refusal of each uid in a window is logged, the rest are only
/// counted, and the count is reported with the next refusal logged for that uid.
struct RefusalLogLimiter {
    /// What to do with one refusal.
    enum Decision: Equatable {
        /// Log it, saying how many of this uid's refusals went unlogged before it.
        case log(suppressedBefore: Int)
        /// Count it only.
        case suppress
    }

    /// The length of a window, in monotonic nanoseconds.
    let window: UInt64
    /// Most uids remembered; past it, windows that have ended are forgotten.
    let maxTrackedUIDs: Int
    private var windows: [UInt32: (start: UInt64, suppressed: Int)] = [:]

    init(window: Duration = .seconds(10), maxTrackedUIDs: Int = 1024) {
        let (seconds, attoseconds) = window.components
        self.window = UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
        self.maxTrackedUIDs = maxTrackedUIDs
    }

    /// The decision for a refusal of `uid` at monotonic time `now` (nanoseconds).
    mutating func refused(uid: UInt32, now: UInt64) -> Decision {
        if let current = windows[uid], now &- current.start < window {
            windows[uid]!.suppressed += 1
            return .suppress
        }
        let suppressed = windows[uid]?.suppressed ?? 0
        if windows[uid] == nil, windows.count >= maxTrackedUIDs {
            windows = windows.filter { now &- $0.value.start < window }
            // Still full: every tracked uid is in its window. Forget them rather than grow.
            if windows.count >= maxTrackedUIDs { windows.removeAll() }
        }
        windows[uid] = (now, 0)
        return .log(suppressedBefore: suppressed)
    }
}
