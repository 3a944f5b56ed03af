import LinuxIO

/// Refusals one user can cause in a loop are logged a burst at a time (`RefusalLogLimiter`).
extension Daemon {
    /// What a user can be refused in a loop.
    enum Refused: CaseIterable {
        case connection, registration

        var plural: String {
            switch self {
            case .connection: "connections"
            case .registration: "registrations"
            }
        }
    }

    /// Whether to log a refusal of `uid` (and tell `Events` subscribers): one user refused in
    /// a loop must not flood the journal. Reports first what was suppressed before it.
    func logsRefusal(_ refused: Refused, uid: UInt32) -> Bool {
        guard case .log(let before) = refusalLimiters[refused]!.admit(uid: uid, now: MonotonicClock.nanoseconds()) else {
            return false
        }
        if before > 0 { logSuppressedRefusals(refused, uid: uid, count: before) }
        if refusalReportTimer == nil {
            refusalReportTimer = loop.schedule(every: .seconds(1)) { [unowned self] in reportEndedRefusalWindows() }
        }
        return true
    }

    /// Reports the floods whose windows ended, even when they stopped (no later refusal
    /// would report them), and stops the timer once no window is open.
    private func reportEndedRefusalWindows() {
        let now = MonotonicClock.nanoseconds()
        for refused in Refused.allCases {
            for report in refusalLimiters[refused]!.expire(now: now) {
                logSuppressedRefusals(refused, uid: report.uid, count: report.count)
            }
        }
        if refusalLimiters.values.allSatisfy(\.isIdle), let timer = refusalReportTimer {
            loop.cancel(timer)
            refusalReportTimer = nil
        }
    }

    private func logSuppressedRefusals(_ refused: Refused, uid: UInt32, count: Int) {
        log(.refusalsSuppressed, "\(count) more refusals for uid \(uid) suppressed (\(refused.plural))",
            [(DaemonEventField.peerUID, String(uid)), (DaemonEventField.suppressed, String(count)), ("REFUSED", refused.plural)])
    }
}
