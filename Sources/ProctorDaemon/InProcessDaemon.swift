import Dispatch
import Glibc
package import JSONCore
import LinuxIO
package import ProctorPolicy
package import ProctorProtocol
import SystemdKit
import Synchronization
package import Varlink

/// proctord's own code — the same `Daemon`, Varlink services, method handlers and SQLite
/// state store — serving inside the calling process on a thread of its own, on sockets and
/// a state directory under a directory of the caller's. ProctorKitTesting's `FakeAgent` is
/// one, so an app's tests run against the real contract without a daemon process.
///
/// Differences from `proctord`, all of them about the process around the daemon: callers'
/// identities are not checked against `match` (every caller is the test's own process), the
/// log goes nowhere, and systemd is not told anything. The administrator's actions are
/// methods here rather than Admin calls, so a test needs no privileges.
package final class InProcessDaemon: @unchecked Sendable {
    /// Why the daemon could not start.
    package struct StartFailure: Error, CustomStringConvertible {
        package let description: String
    }

    package let configuration: DaemonConfiguration
    /// Told, on the daemon's thread, of every report an app made and the daemon accepted.
    private let onReport: @Sendable (AppID, any ProtocolMessage) -> Void
    /// Only ever touched on the daemon's thread (`perform`), or while it is not running.
    private var daemon: Daemon?
    private var loop: EventLoop?
    private var finished: DispatchSemaphore?

    /// A daemon on `directory`: `directory/config/policy.d` must hold the policy; state and
    /// sockets go to `directory/state` and `directory/run`. Not started yet.
    package init(directory: String, onReport: @escaping @Sendable (AppID, any ProtocolMessage) -> Void) {
        configuration = .inProcess(directory: directory)
        self.onReport = onReport
    }

    package var agentSocketPath: String { configuration.agentSocketPath }

    /// Starts serving; returns once both sockets listen. The state directory survives a
    /// `stop()`, as proctord's does a restart.
    package func start() throws(StartFailure) {
        precondition(daemon == nil, "the in-process daemon is already running")
        let loop: EventLoop
        let daemon: Daemon
        do {
            loop = try EventLoop()
        } catch {
            throw StartFailure(description: "cannot set up an event loop: \(error)")
        }
        do {
            daemon = try Daemon.inProcess(configuration, loop: loop)
        } catch {
            throw StartFailure(description: "\(error)")
        }
        daemon.onReport = onReport
        let outcome = Mutex<Result<Void, StartupError>?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        loop.execute {
            outcome.withLock { $0 = .success(()) }
            ready.signal()
        }
        // The loop runs for the daemon's whole life: a thread of its own, not a shared worker.
        let confined = LoopConfined(daemon)
        DetachedThread.start {
            do throws(StartupError) {
                try confined.daemon.serve()
            } catch {
                outcome.withLock { if $0 == nil { $0 = .failure(error) } }
                ready.signal()
            }
            finished.signal()
        }
        ready.wait()
        if case .failure(let error)? = outcome.withLock({ $0 }) {
            finished.wait()
            throw StartFailure(description: error.message)
        }
        self.daemon = daemon
        self.loop = loop
        self.finished = finished
    }

    /// Stops serving as proctord does on SIGTERM: every connection closes, the sessions end,
    /// the state store is closed. Returns once the daemon's thread has ended.
    package func stop() {
        guard let daemon, let finished else { return }
        let confined = LoopConfined(daemon)
        daemon.loop.execute { confined.daemon.stop(signal: SIGTERM) }
        finished.wait()
        self.daemon = nil
        loop = nil
        self.finished = nil
    }

    package var isRunning: Bool { daemon != nil }

    /// Runs `work` on the daemon's thread and returns its result; the daemon must be running.
    private func perform<Result: Sendable>(_ work: @escaping @Sendable (Daemon) throws(VarlinkError) -> Result)
        throws(VarlinkError) -> Result
    {
        try performWaiting { daemon, done throws(VarlinkError) in done(try work(daemon)) }
    }

    /// Runs `work` on the daemon's thread and waits until it calls `done`, at once or later
    /// on that thread (a reload finishes after its compile off the loop).
    private func performWaiting<Result: Sendable>(
        _ work: @escaping @Sendable (Daemon, @escaping (Result) -> Void) throws(VarlinkError) -> Void) throws(VarlinkError) -> Result
    {
        guard let daemon else { throw AdminError.storageFailure("the in-process daemon is stopped") }
        let outcome = Mutex<Swift.Result<Result, VarlinkError>?>(nil)
        let finished = DispatchSemaphore(value: 0)
        let confined = LoopConfined(daemon)
        daemon.loop.execute {
            do throws(VarlinkError) {
                try work(confined.daemon) { value in
                    outcome.withLock { $0 = .success(value) }
                    finished.signal()
                }
            } catch {
                outcome.withLock { $0 = .failure(error) }
                finished.signal()
            }
        }
        finished.wait()
        return try outcome.withLock { $0! }.get()
    }

    /// Re-reads `policy.d`, as SIGHUP does; the problems when it is invalid (the policy in
    /// force then stays).
    package func reload() -> [PolicyProblem] {
        (try? performWaiting { daemon, done in daemon.reload { done($0.problems) } }) ?? []
    }

    /// `Admin.Wipe` by the test: the directive's id.
    package func wipe(appID: AppID) throws(VarlinkError) -> String {
        try perform { daemon throws(VarlinkError) in
            try daemon.wipe(appID, daemon.testContext).directiveId
        }
    }

    /// `Admin.Notify` by the test: how many sessions received it.
    package func notify(appID: AppID, payload: [String: JSONValue]) throws(VarlinkError) -> Int {
        try perform { daemon throws(VarlinkError) in
            try daemon.notify(Admin.Notify.Request(appId: appID, payload: payload), daemon.testContext).delivered
        }
    }

    /// Sessions with an open `Subscribe` call.
    package var subscribedSessionCount: Int {
        (try? perform { daemon in
            daemon.registry.sessionsByApp.keys.reduce(0) { $0 + daemon.registry.connectedSubscribers(of: $1).count }
        }) ?? 0
    }

    deinit { stop() }
}

/// The daemon, handed to its own thread: it is only ever used there (`EventLoop.execute`
/// runs the closures on the loop's thread), hence unchecked.
private struct LoopConfined: @unchecked Sendable {
    let daemon: Daemon
    init(_ daemon: Daemon) { self.daemon = daemon }
}

extension DaemonConfiguration {
    /// The settings of a daemon run in process on `directory`: `directory/config/policy.d`
    /// holds the policy; state and sockets go to `directory/state` and `directory/run`.
    static func inProcess(directory: String) -> DaemonConfiguration {
        var configuration = DaemonConfiguration()
        configuration.configDirectory = directory + "/config"
        configuration.stateDirectory = directory + "/state"
        configuration.runtimeDirectory = directory + "/run"
        configuration.logTarget = .stderr
        return configuration
    }
}

extension Daemon {
    /// A daemon run inside another process (`InProcessDaemon`, `SocketlessDaemon`): every
    /// caller is that process, so identities are not checked, and the log goes nowhere (a
    /// test's output is the test's), or to `log` for a test that reads it.
    ///
    /// A directory that a stopped daemon of this process just released can still look locked:
    /// a program another thread spawns holds a copy of every descriptor, the lock's too, from
    /// its fork until its exec closes them (`O_CLOEXEC`), and under load that takes a while.
    /// So while the lock's recorded holder is this process, this retries for up to 10 s.
    static func inProcess(_ configuration: DaemonConfiguration, loop: EventLoop,
                          keeping log: KeptLog? = nil) throws(StartupError) -> Daemon {
        var retries = 200
        while true {
            let started = Result { () throws(StartupError) in
                try Daemon(configuration: configuration, loop: loop,
                           logger: Logger(sink: log ?? DiscardingSink(), capacity: log?.capacity ?? 4096,
                                          droppedMessagesID: DaemonEvent.logMessagesDropped.messageID))
            }
            switch started {
            case .success(let daemon):
                daemon.verifiesCallers = false
                return daemon
            case .failure(let failure):
                guard failure.isLockedByThisProcess, retries > 0 else { throw failure }
                retries -= 1
                usleep(50_000)
            }
        }
    }
}

private struct DiscardingSink: LogSink {
    func write(_ event: LogEvent) throws(LogSinkError) {}
}

/// What a daemon run in process logged, kept for a test that reads it
/// (`Daemon.inProcess(_:loop:keeping:)`), with its logger's queue of `capacity` events.
final class KeptLog: LogSink {
    let capacity: Int
    private let events = Mutex<[LogEvent]>([])

    init(capacity: Int = 4096) { self.capacity = capacity }

    var written: [LogEvent] { events.withLock { $0 } }

    func write(_ event: LogEvent) throws(LogSinkError) { events.withLock { $0.append(event) } }
}
