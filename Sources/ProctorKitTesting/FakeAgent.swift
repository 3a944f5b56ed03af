import Foundation
public import JSONCore
public import ProctorKit
public import ProctorPolicy
import LinuxIO
import ProctorDaemon
import ProctorProtocol
import Synchronization
import Varlink

/// proctord's Agent interface inside the test process, fed a policy document, so an app's
/// delegate can be tested without a daemon: hand it to `PolicyApplication.agentTransport`
/// (or use `PolicyApplicationHarness`).
///
/// It is proctord's own code — the same Varlink service, method handlers, decision engine
/// and SQLite state store (in a temporary directory) — serving a Unix socket on a thread of
/// its own, so the app meets the real contract: unknown apps, unknown event names and a
/// seventeenth session on one connection are refused as proctord refuses them. The test
/// drives it as an administrator would: `apply(policy:)`, `wipe(appID:)`,
/// `notify(appID:payload:)`, `stop()`/`start()` for proctord going away and coming back (its
/// state, such as pending wipes, survives as across a restart), and reads what the app
/// reported. Not checked: the caller's identity (`match`), since every caller is the test's
/// own process.
public final class FakeAgent: AgentTransport {
    /// A lifecycle event or denial the app reported (`ReportEvent`) and proctord accepted.
    public struct ReportedEvent: Sendable, Equatable {
        public let appID: AppID
        public let event: String
        public let detail: JSONValue?
    }

    /// A feedback entry the app reported (`ReportFeedback`) and proctord accepted.
    public struct ReportedFeedback: Sendable, Equatable {
        public let appID: AppID
        public let key: String
        public let severity: String
        public let message: String
        public let data: JSONValue?
    }

    /// What the app reported and proctord accepted, in order; written on the daemon's thread.
    private final class ReportLog: Sendable {
        struct Reports {
            var events: [ReportedEvent] = []
            var feedback: [ReportedFeedback] = []
            var acknowledgedWipes: [String] = []
        }

        let reports = Mutex(Reports())

        func record(_ report: any ProtocolMessage, of appID: AppID) {
            reports.withLock { reports in
                switch report {
                case let event as Agent.ReportEvent.Request:
                    reports.events.append(ReportedEvent(appID: appID, event: event.event, detail: event.detail.map(JSONValue.object)))
                case let feedback as Agent.ReportFeedback.Request:
                    reports.feedback.append(ReportedFeedback(appID: appID, key: feedback.key, severity: feedback.severity.rawValue,
                                                             message: feedback.message, data: feedback.data.map(JSONValue.object)))
                case let acknowledgement as Agent.AcknowledgeWipe.Request where acknowledgement.outcome != .failed:
                    reports.acknowledgedWipes.append(acknowledgement.directiveId)
                default:
                    break
                }
            }
        }
    }

    /// Where the policy, state and sockets live; removed with the agent.
    private let directory: String
    private let log = ReportLog()
    /// One administrator action at a time, and never one while the daemon starts or stops.
    private let daemon: Mutex<InProcessDaemon>

    /// An agent serving `policy` (a complete policy document, JSON, with its `version`).
    /// - Throws: `PolicyProblems` when the document is not a valid policy; `FakeAgentError`
    ///   when the daemon cannot start.
    public init(policy document: String) throws {
        try Self.check(document)
        do {
            directory = try Directory.makeTemporary(prefix: "proctor-fake-agent", in: FileManager.default.temporaryDirectory.path)
        } catch {
            throw FakeAgentError.cannotStart("cannot create its directory: \(error)")
        }
        try FileManager.default.createDirectory(atPath: directory + "/config/policy.d", withIntermediateDirectories: true)
        let daemon = InProcessDaemon(directory: directory) { [log] appID, report in log.record(report, of: appID) }
        self.daemon = Mutex(daemon)
        try write(document)
        do {
            try daemon.start()
        } catch {
            throw FakeAgentError.cannotStart("\(error)")
        }
    }

    deinit {
        daemon.withLock { $0.stop() }
        try? FileManager.default.removeItem(atPath: directory)
    }

    private static func check(_ document: String) throws(PolicyProblems) {
        _ = try Policy.parse(Array(document.utf8), source: "FakeAgent policy")
    }

    private func write(_ document: String) throws {
        try Data(document.utf8).write(to: URL(fileURLWithPath: directory + "/config/policy.d/00-fake-agent.json"), options: .atomic)
    }

    // MARK: What the test does

    /// Puts a new policy in force (as an edit of `policy.d` and a reload); every subscribed
    /// session whose view changed hears of it, as from proctord. While the agent is stopped
    /// the policy is read when it starts again.
    public func apply(policy document: String) throws {
        try Self.check(document)
        try write(document)
        let problems = daemon.withLock { $0.reload() }
        guard problems.isEmpty else { throw PolicyProblems(problems) }
    }

    /// Orders a wipe of `appID`'s data (`Admin.Wipe`) and returns the directive's id. It is
    /// delivered to the subscribed sessions now and in every registration until acknowledged.
    /// - Throws: `VarlinkError` `io.proctor.Admin.UnknownApp` for an app neither in policy
    ///   nor ever registered.
    @discardableResult
    public func wipe(appID: AppID) throws -> String {
        try daemon.withLock { daemon in
            guard daemon.isRunning else { throw FakeAgentError.notRunning }
            return try daemon.wipe(appID: appID)
        }
    }

    /// Pushes `payload` to `appID`'s subscribed sessions (`Admin.Notify`, arriving as
    /// `didReceiveRemoteNotification`); returns how many received it.
    /// - Throws: `VarlinkError` `io.proctor.Admin.UnknownApp` for an app not in policy.
    @discardableResult
    public func notify(appID: AppID, payload: [String: JSONValue]) throws -> Int {
        try daemon.withLock { daemon in
            guard daemon.isRunning else { throw FakeAgentError.notRunning }
            return try daemon.notify(appID: appID, payload: payload)
        }
    }

    /// proctord goes away: every connection breaks and new ones are refused until `start()`.
    public func stop() {
        daemon.withLock { $0.stop() }
    }

    /// proctord is back, with the state it had: connections are accepted again.
    public func start() throws {
        try daemon.withLock { daemon throws(InProcessDaemon.StartFailure) in
            if !daemon.isRunning { try daemon.start() }
        }
    }

    /// The events reported so far, in order.
    public var events: [ReportedEvent] { log.reports.withLock { $0.events } }
    /// The feedback reported so far, in order.
    public var feedback: [ReportedFeedback] { log.reports.withLock { $0.feedback } }
    /// The wipe directives acknowledged as completed, in order.
    public var acknowledgedWipes: [String] { log.reports.withLock { $0.acknowledgedWipes } }
    /// The number of sessions with an open subscription.
    public var subscribedSessionCount: Int { daemon.withLock { $0.subscribedSessionCount } }

    // MARK: AgentTransport

    public func connect() throws -> any AgentConnection {
        let path = try daemon.withLock { daemon throws(FakeAgentError) in
            guard daemon.isRunning else { throw FakeAgentError.notRunning }
            return daemon.agentSocketPath
        }
        return try VarlinkAgentTransport(path: path).connect()
    }
}

/// Why the fake agent refused a connection or could not start.
public enum FakeAgentError: Error, Sendable, CustomStringConvertible {
    /// `stop()` was called: proctord is away.
    case notRunning
    /// The in-process daemon could not start (its directory, its sockets).
    case cannotStart(String)

    public var description: String {
        switch self {
        case .notRunning: "the fake agent is stopped (proctord is away)"
        case .cannotStart(let why): "the fake agent could not start: \(why)"
        }
    }
}
