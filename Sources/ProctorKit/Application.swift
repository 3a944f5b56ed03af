import Dispatch
import Foundation
public import JSONCore
import Glibc
import SystemdKit

/// The application object: owns the main run loop (which serves the main dispatch queue) and turns
/// Linux's signals, login-session state and memory pressure into UIKit's lifecycle events
/// for its `delegate`. Under systemd it also reports readiness, stopping and watchdog pings.
///
/// `ApplicationMain` creates the one instance (of this class or the subclass it names) and
/// runs it; the process ends inside the application. Event sources, in UIKit's terms:
///
/// | event | source |
/// |---|---|
/// | didFinishLaunching | launch, once `prepareLaunch(options:)` lets it proceed |
/// | didBecomeActive / willResignActive | the logind session becoming active / inactive |
/// | didEnterBackground / willEnterForeground | SIGTSTP (then the process stops) / SIGCONT |
/// | willTerminate | SIGTERM, SIGINT (then exit status 0) |
/// | didReceiveReload | SIGHUP |
/// | didReceiveMemoryWarning | PSI trigger on `/proc/pressure/memory` |
/// | userDidChange | another user's session taking the seat |
///
/// Subclasses intercept: `prepareLaunch(options:)` runs before didFinishLaunching reaches
/// the delegate and may defer (by not returning yet) or refuse the launch, and each event
/// arrives first at an `open func` of the same name whose base implementation forwards it to
/// the delegate — an override acts, then calls `super` to let the event through.
@MainActor
open class Application {
    /// The application's state in UIKit's terms.
    public enum State: Sendable, Equatable {
        /// In the foreground and the login session is active.
        case active
        /// In the foreground, but the login session is not active (locked, switched away).
        case inactive
        /// Suspended by job control (SIGTSTP until SIGCONT).
        case background
    }

    /// Keys of the dictionary handed to `application(_:didFinishLaunchingWithOptions:)`.
    public struct LaunchOptionsKey: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The command line, `[String]`, program name first.
        public static let arguments = LaunchOptionsKey(rawValue: "arguments")
    }

    /// What `prepareLaunch(options:)` decided.
    public enum LaunchDecision: Sendable, Equatable {
        /// Deliver didFinishLaunching to the delegate.
        case proceed
        /// Never deliver it: the process writes `reason` on one line of standard error and
        /// exits with `exitStatus`.
        case refuse(reason: String, exitStatus: ApplicationExitStatus = .launchRefused)
    }

    /// A condition worth one line to the operator that does not stop the application
    /// (an event source that is unavailable, a failed message to systemd).
    public struct Diagnostic: Sendable, Equatable, CustomStringConvertible {
        public let message: String
        public init(message: String) { self.message = message }
        public var description: String { message }
    }

    private(set) static var current: Application?

    /// The running application. Using it before `ApplicationMain` created the application is
    /// a programmer error.
    public static var shared: Application {
        guard let current else {
            preconditionFailure("Application.shared was used before ApplicationMain created the application")
        }
        return current
    }

    /// The Info.plist `ApplicationMain` found (see `InfoPlist` for the lookup order), as a
    /// dictionary; empty when there is none. Set before the application class is created.
    public internal(set) static var infoDictionary: [String: Any] = [:]
    /// The path `infoDictionary` was read from, if any.
    public internal(set) static var infoPlistPath: String?

    /// Receives the lifecycle events; held strongly for the life of the process.
    public var delegate: (any ApplicationDelegate)?

    /// The current state; `.active` from launch for a process outside any login session.
    public var applicationState: State { stateMachine.state }

    private var stateMachine = LifecycleStateMachine(sessionIsActive: true)
    private let notifier = SystemdNotifier()
    private var signalWatcher: SignalWatcher?
    private var sessionMonitor: SessionMonitor?
    private var watchdogTimer: (any DispatchSourceTimer)?

    public required init() {}

    // MARK: Hooks for subclasses

    /// Runs before didFinishLaunching reaches the delegate. Returning `.proceed` lets launch
    /// continue; the launch waits for as long as this does not return; `.refuse` ends the
    /// process. Signals keep being handled meanwhile. The default proceeds at once.
    open func prepareLaunch(options: [LaunchOptionsKey: Any]) async -> LaunchDecision {
        .proceed
    }

    /// Asks the delegate to finish launching; true (also without a delegate) means ready.
    open func didFinishLaunching(options: [LaunchOptionsKey: Any]) -> Bool {
        delegate?.application(self, didFinishLaunchingWithOptions: options) ?? true
    }

    /// Forwards didBecomeActive to the delegate.
    open func didBecomeActive() { delegate?.applicationDidBecomeActive(self) }
    /// Forwards willResignActive to the delegate.
    open func willResignActive() { delegate?.applicationWillResignActive(self) }
    /// Forwards didEnterBackground to the delegate; the process stops after it returns.
    open func didEnterBackground() { delegate?.applicationDidEnterBackground(self) }
    /// Forwards willEnterForeground to the delegate.
    open func willEnterForeground() { delegate?.applicationWillEnterForeground(self) }
    /// Forwards willTerminate to the delegate; the process exits after it returns.
    open func willTerminate() { delegate?.applicationWillTerminate(self) }
    /// Forwards didReceiveMemoryWarning to the delegate.
    open func didReceiveMemoryWarning() { delegate?.applicationDidReceiveMemoryWarning(self) }
    /// Forwards userDidChange to the delegate.
    open func userDidChange() { delegate?.applicationUserDidChange(self) }
    /// Forwards didReceiveReload to the delegate.
    open func didReceiveReload() { delegate?.applicationDidReceiveReload(self) }
    /// Forwards a remote notification to the delegate. `Application` has no source of pushes
    /// itself; a subclass that receives them (from proctord) calls this.
    open func didReceiveRemoteNotification(_ userInfo: [String: JSONValue]) {
        delegate?.application(self, didReceiveRemoteNotification: userInfo)
    }
    /// Forwards managedConfigurationDidChange to the delegate. A subclass that receives
    /// managed configuration calls this after the new configuration is in place.
    open func managedConfigurationDidChange() { delegate?.applicationManagedConfigurationDidChange(self) }

    /// Reports a condition that does not stop the application. The default writes one line,
    /// prefixed with the program's name, to standard error.
    open func report(_ diagnostic: Diagnostic) {
        writeStandardErrorLine(diagnostic.message)
    }

    // MARK: Running

    /// Takes over the process: starts the event sources, launches on the main queue and
    /// serves it until termination.
    func run(arguments: [String], signals: SignalWatcher) -> Never {
        Application.current = self
        signalWatcher = signals
        signals.start { [unowned self] signal in self.handle(signal: signal) }
        startSessionMonitor()
        startMemoryPressureMonitor()
        let options: [LaunchOptionsKey: Any] = [.arguments: arguments]
        Task { @MainActor in await self.launch(options: options) }
        // The main run loop serves the main queue (and so the main actor) on the main thread.
        // Not dispatchMain(): on Linux it parks the main thread (pthread_exit, then sigsuspend)
        // and drains the main queue on a worker thread, misleading main-thread checks.
        while true { RunLoop.main.run() }
    }

    private func launch(options: [LaunchOptionsKey: Any]) async {
        if case .refuse(let reason, let status) = await prepareLaunch(options: options) {
            notify(["STOPPING=1"])
            exit("launch refused: \(reason)", status: status)
        }
        guard didFinishLaunching(options: options) else {
            notify(["STOPPING=1"])
            exit("launch declined: application(_:didFinishLaunchingWithOptions:) returned false",
                 status: .launchDeclined)
        }
        notify(["READY=1"])
        startWatchdog()
        perform(stateMachine.launchDidFinish())
    }

    private func handle(signal: Int32) {
        switch signal {
        case SIGTERM, SIGINT: perform(stateMachine.terminationRequested())
        case SIGHUP: perform(stateMachine.occurred(.didReceiveReload))
        case SIGTSTP: perform(stateMachine.suspendRequested())
        case SIGCONT: perform(stateMachine.resumed())
        default: break
        }
    }

    private func perform(_ actions: [LifecycleStateMachine.Action]) {
        for action in actions {
            switch action {
            case .deliver(let event): deliver(event)
            case .stopProcess: kill(getpid(), SIGSTOP)
            case .notifyStopping: notify(["STOPPING=1"])
            case .exitCleanly: Glibc.exit(0)
            }
        }
    }

    private func deliver(_ event: LifecycleEvent) {
        switch event {
        case .didBecomeActive: didBecomeActive()
        case .willResignActive: willResignActive()
        case .didEnterBackground: didEnterBackground()
        case .willEnterForeground: willEnterForeground()
        case .willTerminate: willTerminate()
        case .didReceiveMemoryWarning: didReceiveMemoryWarning()
        case .userDidChange: userDidChange()
        case .didReceiveReload: didReceiveReload()
        }
    }

    // MARK: Event sources

    private func startSessionMonitor() {
        switch SessionMonitor.lookUp() {
        case .outsideSession:
            stateMachine = LifecycleStateMachine(sessionIsActive: true)
        case .unavailable(let error):
            stateMachine = LifecycleStateMachine(sessionIsActive: true)
            report(Diagnostic(message: "login session state unavailable (\(error)), treating the application as active"))
        case .session(let monitor):
            stateMachine = LifecycleStateMachine(sessionIsActive: monitor.isActive)
            do {
                try monitor.start { [unowned self] change in
                    switch change {
                    case .activity(let isActive): self.perform(self.stateMachine.sessionActivityChanged(isActive: isActive))
                    case .seatTakenByAnotherUser: self.perform(self.stateMachine.occurred(.userDidChange))
                    }
                }
                sessionMonitor = monitor
            } catch {
                report(Diagnostic(message: "cannot watch the login session (\(error)), its changes will not be delivered"))
            }
        }
    }

    private func startMemoryPressureMonitor() {
        do {
            try MemoryPressureMonitor.start {
                DispatchQueue.main.async {
                    MainActor.assumeIsolated {
                        let application = Application.shared
                        application.perform(application.stateMachine.occurred(.didReceiveMemoryWarning))
                    }
                }
            }
        } catch {
            report(Diagnostic(message: "memory pressure (PSI) unavailable (\(error)), no memory warnings will be delivered"))
        }
    }

    /// Pings at half the interval systemd expects (`WATCHDOG_USEC`), from the main queue, so a
    /// blocked main loop is what stops the pings.
    private func startWatchdog() {
        let interval: Duration
        do {
            guard let pingInterval = try notifier.watchdogPingInterval() else { return }
            interval = pingInterval
        } catch {
            report(Diagnostic(message: "watchdog settings unreadable (\(error)), not pinging the watchdog"))
            return
        }
        let (seconds, attoseconds) = interval.components
        let microseconds = Int(seconds) * 1_000_000 + Int(attoseconds / 1_000_000_000_000)
        let timer = DispatchSource.makeTimerSource(queue: .main)
        timer.schedule(deadline: .now() + .microseconds(microseconds), repeating: .microseconds(microseconds))
        timer.setEventHandler { [unowned self] in
            MainActor.assumeIsolated { self.notify(["WATCHDOG=1"]) }
        }
        timer.resume()
        watchdogTimer = timer
    }

    private var notifyFailureReported = false

    private func notify(_ assignments: [String]) {
        do {
            try notifier.notify(assignments)
        } catch {
            guard !notifyFailureReported else { return }
            notifyFailureReported = true
            report(Diagnostic(message: "cannot notify systemd (\(error)), ignoring"))
        }
    }
}
