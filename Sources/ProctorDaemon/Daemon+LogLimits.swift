import LinuxIO

/// What one user can make proctord log in a loop is logged a burst at a time (`UserLogLimiter`).
extension Daemon {
    /// The kinds of lines a user can cause in a loop, each limited apart.
    enum LimitedLine: CaseIterable {
        /// A connection refused at a limit (`clientLimitHit`).
        case refusedConnection
        /// A `Register` refused (identity mismatch, unknown app).
        case refusedRegistration
        /// A registered app's denied decision (`decisionDenied`): the event history keeps every
        /// one; the journal the first of each burst.
        case denial
    }

    /// One limiter per kind, reached by a switch, and the timer that reports what they
    /// suppressed: a denial asks on every call, so the daemon keeps them behind a pointer
    /// (`logLimits`), where an access is not a run-time exclusivity check.
    struct LogLimits {
        /// 10 refusals per uid and 100 in all every 10 s.
        var refusedConnection = UserLogLimiter(burst: 10, totalBurst: 100)
        var refusedRegistration = UserLogLimiter(burst: 10, totalBurst: 100)
        /// 100 denials per uid and 1 000 in all every 10 s: an app that is denied now and then
        /// has every denial logged; what the limit keeps proctord under is journald's own,
        /// 10 000 lines per service and priority every 30 s.
        var denial = UserLogLimiter(burst: 100, totalBurst: 1_000)

        mutating func admit(_ line: LimitedLine, uid: UInt32, now: UInt64) -> UserLogLimiter.Admission {
            switch line {
            case .refusedConnection: refusedConnection.admit(uid: uid, now: now)
            case .refusedRegistration: refusedRegistration.admit(uid: uid, now: now)
            case .denial: denial.admit(uid: uid, now: now)
            }
        }

        /// What every limiter suppressed in the windows that ended by `now`.
        mutating func expire(now: UInt64) -> [(LimitedLine, UserLogLimiter.Suppressed)] {
            refusedConnection.expire(now: now).map { (.refusedConnection, $0) }
                + refusedRegistration.expire(now: now).map { (.refusedRegistration, $0) }
                + denial.expire(now: now).map { (.denial, $0) }
        }

        var isIdle: Bool { refusedConnection.isIdle && refusedRegistration.isIdle && denial.isIdle }

        /// Reports what the limiters suppressed once their windows end; runs only while a window is open.
        var reportTimer: TimerHandle?
    }

    /// Whether to log a line of `kind` about `uid` (and, for a refusal, tell `Events`
    /// subscribers): one user must not flood the journal. Reports first what was suppressed
    /// before it.
    func logs(_ line: LimitedLine, uid: UInt32) -> Bool {
        let admission = logLimits.pointee.admit(line, uid: uid, now: MonotonicClock.nanoseconds())
        startLogLimitReports()  // a window is open now, whatever the admission
        guard case .log(let before) = admission else { return false }
        if before > 0 { logSuppressed(line, uid: uid, count: before) }
        return true
    }

    private func startLogLimitReports() {
        guard logLimits.pointee.reportTimer == nil else { return }
        logLimits.pointee.reportTimer = loop.schedule(every: .seconds(1)) { [unowned self] in reportEndedLogLimitWindows() }
    }

    /// Reports the floods whose windows ended, even when they stopped (no later line would
    /// report them), and stops the timer once no window is open.
    private func reportEndedLogLimitWindows() {
        for (line, report) in logLimits.pointee.expire(now: MonotonicClock.nanoseconds()) {
            logSuppressed(line, uid: report.uid, count: report.count)
        }
        if logLimits.pointee.isIdle, let timer = logLimits.pointee.reportTimer {
            loop.cancel(timer)
            logLimits.pointee.reportTimer = nil
        }
    }

    private func logSuppressed(_ line: LimitedLine, uid: UInt32, count: Int) {
        let fields = [(DaemonEventField.peerUID, String(uid)), (DaemonEventField.suppressed, String(count))]
        switch line {
        case .refusedConnection, .refusedRegistration:
            let refused = line == .refusedConnection ? "connections" : "registrations"
            log(.refusalsSuppressed, "\(count) more refusals for uid \(uid) suppressed (\(refused))", fields + [("REFUSED", refused)])
        case .denial:
            log(.denialsSuppressed, "\(count) more denials for uid \(uid) not logged (the event history keeps every one)",
                fields)
        }
    }
}
