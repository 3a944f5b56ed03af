/// UIKit's application state machine, driven by Linux's event sources.
///
/// It only decides: each `mutating func` takes one input and returns the actions the
/// caller performs, in order, so the transitions are testable without signals or logind.
/// States follow UIKit: *active* (foreground, session active), *inactive* (foreground,
/// session inactive), *background* (stopped by job control). Moving between active and
/// background passes through inactive, so the delegate sees UIKit's pairs
/// (`willResignActive` before `didEnterBackground`, `willEnterForeground` before
/// `didBecomeActive`). Before launch completes, inputs update the state but deliver nothing.
struct LifecycleStateMachine: Sendable {
    enum Action: Equatable, Sendable {
        /// Hand the event to the application (and so to its delegate).
        case deliver(LifecycleEvent)
        /// Stop the process for real (SIGSTOP), after the events before it were delivered.
        case stopProcess
        /// Tell systemd the service is stopping (before the delegate's last words).
        case notifyStopping
        /// Exit with status 0.
        case exitCleanly
    }

    private enum Phase: Equatable, Sendable {
        case launching, running, terminating
    }

    private var phase = Phase.launching
    private var sessionIsActive: Bool
    private var isSuspended = false

    /// Starts in the launching phase; `sessionIsActive` is the login session's state at launch
    /// (true for a process outside any session).
    init(sessionIsActive: Bool) {
        self.sessionIsActive = sessionIsActive
    }

    /// The state UIKit would report.
    var state: Application.State {
        if isSuspended { return .background }
        return sessionIsActive ? .active : .inactive
    }

    /// didFinishLaunching returned true: the application runs, and becomes active at once
    /// if its session is active and it was not stopped meanwhile.
    mutating func launchDidFinish() -> [Action] {
        guard phase == .launching else { return [] }
        phase = .running
        return state == .active ? [.deliver(.didBecomeActive)] : []
    }

    /// The login session became active or inactive.
    mutating func sessionActivityChanged(isActive: Bool) -> [Action] {
        guard isActive != sessionIsActive else { return [] }
        sessionIsActive = isActive
        guard phase == .running, !isSuspended else { return [] }
        return [.deliver(isActive ? .didBecomeActive : .willResignActive)]
    }

    /// SIGTSTP: leave the foreground, then stop.
    mutating func suspendRequested() -> [Action] {
        guard phase != .terminating else { return [] }
        let wasState = state
        isSuspended = true
        guard phase == .running, wasState != .background else { return [.stopProcess] }
        let resign: [Action] = wasState == .active ? [.deliver(.willResignActive)] : []
        return resign + [.deliver(.didEnterBackground), .stopProcess]
    }

    /// SIGCONT: back to the foreground, if job control had put the process in the background.
    /// A SIGCONT without a preceding SIGTSTP (or after a plain SIGSTOP) changes nothing.
    mutating func resumed() -> [Action] {
        guard isSuspended, phase != .terminating else { return [] }
        isSuspended = false
        guard phase == .running else { return [] }
        let activate: [Action] = sessionIsActive ? [.deliver(.didBecomeActive)] : []
        return [.deliver(.willEnterForeground)] + activate
    }

    /// SIGTERM or SIGINT: the delegate hears willTerminate if it ever heard didFinishLaunching.
    mutating func terminationRequested() -> [Action] {
        guard phase != .terminating else { return [] }
        let wasRunning = phase == .running
        phase = .terminating
        return [.notifyStopping] + (wasRunning ? [.deliver(.willTerminate)] : []) + [.exitCleanly]
    }

    /// Events that do not change the state (reload, memory warning, user change) reach the
    /// delegate only while the application runs.
    mutating func occurred(_ event: LifecycleEvent) -> [Action] {
        phase == .running ? [.deliver(event)] : []
    }
}
