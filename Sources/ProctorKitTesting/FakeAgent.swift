public import JSONCore
public import ProctorKit
public import ProctorPolicy
import Synchronization
import Varlink

/// An in-process stand-in for proctord's Agent interface, fed a policy document, so an app's
/// delegate can be tested without a daemon: hand it to `PolicyApplication.agentTransport`
/// (or use `PolicyApplicationHarness`).
///
/// It answers `Register`, `Decide`, `Subscribe`, `ReportEvent`, `ReportFeedback` and
/// `AcknowledgeWipe` as proctord does, with the same decision engine, and records what the app
/// reported. The test drives it as an administrator would: `apply(policy:)`, `wipe(appID:)`,
/// `notify(appID:payload:)`, `stop()`/`start()` for proctord going away and coming back.
/// Not checked: the caller's identity (`match`), which needs a real socket.
public final class FakeAgent: AgentTransport {
    static let interface = "io.proctor.Agent"

    /// A lifecycle event or denial the app reported (`ReportEvent`).
    public struct ReportedEvent: Sendable, Equatable {
        public let appID: AppID
        public let event: String
        public let detail: JSONValue?
    }

    /// A feedback entry the app reported (`ReportFeedback`).
    public struct ReportedFeedback: Sendable, Equatable {
        public let appID: AppID
        public let key: String
        public let severity: String
        public let message: String
        public let data: JSONValue?
    }

    struct Session {
        let appID: AppID
        let version: SemanticVersion?
        var subscription: Subscription?
    }

    struct PendingWipe {
        let id: String
        let issuedAt: String
    }

    struct State {
        var policy: CompiledPolicy
        var running = true
        var sessions: [String: Session] = [:]
        var pendingWipes: [AppID: [PendingWipe]] = [:]
        var wipeCount = 0
        var sessionCount = 0
        var events: [ReportedEvent] = []
        var feedback: [ReportedFeedback] = []
        var acknowledgedWipes: [String] = []
    }

    private let state: Mutex<State>

    /// An agent serving `policy` (a complete policy document, JSON, with its `version`).
    /// - Throws: `PolicyProblems` when the document is not a valid policy.
    public init(policy document: String) throws(PolicyProblems) {
        state = Mutex(State(policy: try Self.compile(document)))
    }

    private static func compile(_ document: String) throws(PolicyProblems) -> CompiledPolicy {
        CompiledPolicy(try Policy.parse(Array(document.utf8), source: "FakeAgent policy"))
    }

    // MARK: What the test does

    /// Puts a new policy in force; every subscribed session hears of it, as from proctord.
    public func apply(policy document: String) throws(PolicyProblems) {
        let compiled = try Self.compile(document)
        state.withLock { state in
            state.policy = compiled
            for session in state.sessions.values {
                session.subscription?.push(Self.fields(for: session.appID, reason: "policy", in: state))
            }
        }
    }

    /// Orders a wipe of `appID`'s data and returns the directive's id. It is delivered to the
    /// subscribed sessions now and in every registration until acknowledged.
    @discardableResult
    public func wipe(appID: AppID) -> String {
        state.withLock { state in
            state.wipeCount += 1
            let id = "wipe-\(state.wipeCount)"
            state.pendingWipes[appID, default: []].append(PendingWipe(id: id, issuedAt: "2026-01-01T00:00:00Z"))
            for session in state.sessions.values where session.appID == appID {
                session.subscription?.push(Self.fields(for: appID, reason: "wipe", in: state))
            }
            return id
        }
    }

    /// Pushes `payload` to `appID`'s subscribed sessions (`didReceiveRemoteNotification`);
    /// returns how many received it.
    @discardableResult
    public func notify(appID: AppID, payload: [String: JSONValue]) -> Int {
        state.withLock { state in
            var delivered = 0
            for session in state.sessions.values where session.appID == appID {
                guard let subscription = session.subscription else { continue }
                var fields = Self.fields(for: appID, reason: "notification", in: state)
                fields["notification"] = .object(payload)
                subscription.push(fields)
                delivered += 1
            }
            return delivered
        }
    }

    /// proctord goes away: every connection breaks and new ones are refused until `start()`.
    public func stop() {
        let subscriptions = state.withLock { state in
            state.running = false
            defer { state.sessions = [:] }
            return state.sessions.values.compactMap(\.subscription)
        }
        for subscription in subscriptions { subscription.close() }
    }

    /// proctord is back: connections are accepted again.
    public func start() {
        state.withLock { $0.running = true }
    }

    /// The events reported so far, in order.
    public var events: [ReportedEvent] { state.withLock { $0.events } }
    /// The feedback reported so far, in order.
    public var feedback: [ReportedFeedback] { state.withLock { $0.feedback } }
    /// The wipe directives acknowledged as completed, in order.
    public var acknowledgedWipes: [String] { state.withLock { $0.acknowledgedWipes } }
    /// The number of sessions with an open subscription.
    public var subscribedSessionCount: Int { state.withLock { $0.sessions.values.filter { $0.subscription != nil }.count } }

    // MARK: AgentTransport

    public func connect() throws -> any AgentConnection {
        guard state.withLock({ $0.running }) else { throw FakeAgentError.notRunning }
        return FakeAgentConnection(agent: self)
    }

    /// One call as proctord would answer it; `connection` owns the sessions it opens.
    func handle(_ method: String, _ parameters: [String: JSONValue], connection: FakeAgentConnection) throws -> [String: JSONValue] {
        let prefix = Self.interface + "."
        guard method.hasPrefix(prefix) else { throw VarlinkError.interfaceNotFound(method) }
        let name = method.dropFirst(prefix.count)
        return try state.withLock { state throws -> [String: JSONValue] in
            guard state.running else { throw FakeAgentError.notRunning }
            if name == "Register" {
                let appID = parameters["appId"]?.stringValue ?? ""
                guard state.policy.appPolicy(appID) != nil else {
                    throw VarlinkError(name: "\(Self.interface).UnknownApp", parameters: ["appId": .string(appID)])
                }
                state.sessionCount += 1
                let id = "fake-session-\(state.sessionCount)"
                state.sessions[id] = Session(appID: appID, version: parameters["version"]?.stringValue.flatMap(SemanticVersion.init),
                                             subscription: nil)
                connection.sessions.withLock { _ = $0.insert(id) }
                var fields = Self.fields(for: appID, reason: nil, in: state)
                fields["session"] = .string(id)
                return fields
            }
            let sessionID = parameters["session"]?.stringValue ?? ""
            guard let session = state.sessions[sessionID], connection.sessions.withLock({ $0.contains(sessionID) }) else {
                throw VarlinkError(name: "\(Self.interface).InvalidSession", parameters: ["session": .string(sessionID)])
            }
            switch name {
            case "Decide":
                guard let action = parameters["action"]?.stringValue.flatMap(Action.init(rawValue:)) else {
                    throw VarlinkError(name: "\(Self.interface).InvalidParameter",
                                       parameters: ["parameter": "action", "reason": "not an action"])
                }
                let decision = state.policy.decide(DecisionRequest(app: session.appID, action: action,
                                                                   target: parameters["target"]?.stringValue,
                                                                   size: parameters["size"]?.intValue, appVersion: session.version))
                return ["allowed": .bool(decision.allowed), "rule": .string(decision.rule), "reason": .string(decision.reason)]
            case "ReportEvent":
                state.events.append(ReportedEvent(appID: session.appID, event: parameters["event"]?.stringValue ?? "",
                                                  detail: parameters["detail"]))
                return [:]
            case "ReportFeedback":
                state.feedback.append(ReportedFeedback(appID: session.appID, key: parameters["key"]?.stringValue ?? "",
                                                       severity: parameters["severity"]?.stringValue ?? "",
                                                       message: parameters["message"]?.stringValue ?? "", data: parameters["data"]))
                return [:]
            case "AcknowledgeWipe":
                let id = parameters["directiveId"]?.stringValue ?? ""
                if parameters["outcome"]?.stringValue != "failed" {
                    state.pendingWipes[session.appID]?.removeAll { $0.id == id }
                    state.acknowledgedWipes.append(id)
                }
                return [:]
            default:
                throw VarlinkError.methodNotFound(method)
            }
        }
    }

    /// Opens the subscription of a session; its first reply is the current state.
    func subscribe(_ parameters: [String: JSONValue], connection: FakeAgentConnection) throws -> Subscription {
        let sessionID = parameters["session"]?.stringValue ?? ""
        return try state.withLock { state throws -> Subscription in
            guard state.running, let session = state.sessions[sessionID], connection.sessions.withLock({ $0.contains(sessionID) }) else {
                throw VarlinkError(name: "\(Self.interface).InvalidSession", parameters: ["session": .string(sessionID)])
            }
            let subscription = Subscription()
            state.sessions[sessionID]?.subscription = subscription
            subscription.push(Self.fields(for: session.appID, reason: "current", in: state))
            return subscription
        }
    }

    /// The fields proctord sends about `appID` in Register and Subscribe replies.
    private static func fields(for appID: AppID, reason: String?, in state: State) -> [String: JSONValue] {
        let policy = state.policy
        var fields: [String: JSONValue]
        if let entry = policy.appPolicy(appID), let rules = policy.effectiveRules(for: appID) {
            fields = ["state": .string(entry.state.rawValue), "config": .object(entry.config),
                      "dlp": rules["dlp"] ?? [:], "compliance": rules["compliance"] ?? [:]]
        } else {
            fields = ["state": "retired", "config": [:], "dlp": [:], "compliance": [:]]
        }
        fields["policyVersion"] = .string(policy.policy.version)
        fields["managedApps"] = .array(policy.managedAppIDs.map(JSONValue.string))
        fields["directives"] = .array((state.pendingWipes[appID] ?? []).map { ["id": .string($0.id), "issuedAt": .string($0.issuedAt)] })
        if let reason { fields["reason"] = .string(reason) }
        return fields
    }
}

/// Why the fake agent refused a connection or a call.
public enum FakeAgentError: Error, Sendable, CustomStringConvertible {
    /// `stop()` was called: proctord is away.
    case notRunning

    public var description: String { "the fake agent is stopped (proctord is away)" }
}
