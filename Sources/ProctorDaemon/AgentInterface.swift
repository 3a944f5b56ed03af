import JSONCore
import ProctorPolicy
import ProctorStore
import Varlink

/// `io.proctor.Agent`: what managed apps call, through ProctorKit.
extension Daemon {
    /// Sessions one connection may open (an app registers once; a few for helpers).
    static let maxSessionsPerConnection = 16

    static let lifecycleEvents: Set<String> = [
        "didFinishLaunching", "didBecomeActive", "willResignActive", "didEnterBackground",
        "willEnterForeground", "didReceiveMemoryWarning", "userDidChange", "didReceiveRemoteNotification",
        "managedConfigurationDidChange", "didReceiveReload", "willTerminate", "dataActionDenied",
    ]

    func agentMethods() -> [String: VarlinkMethod<ConnectionContext>] {
        [
            "Register": VarlinkMethod { [unowned self] call, context, reply throws(VarlinkError) in
                try register(call, context, reply)
            },
            "Decide": VarlinkMethod { [unowned self] call, context, reply throws(VarlinkError) in
                let session = try session(of: call, in: context)
                let action = try action(of: call)
                let request = DecisionRequest(app: session.appID, action: action, target: call.parameters["target"]?.stringValue,
                                              size: call.parameters["size"]?.intValue, appVersion: session.semanticVersion)
                let decision = active.compiled.decide(request)
                record(decision, for: request, peer: context.peer, session: session.id)
                reply.reply(["allowed": .bool(decision.allowed), "rule": .string(decision.rule),
                             "reason": .string(decision.reason)])
            },
            "ReportEvent": VarlinkMethod { [unowned self] call, context, reply throws(VarlinkError) in
                let session = try session(of: call, in: context)
                let event = call.parameters["event"]?.stringValue ?? ""
                guard Self.lifecycleEvents.contains(event) else {
                    throw AgentError.invalidParameter("event", "expected one of \(Self.lifecycleEvents.sorted().joined(separator: ", "))")
                }
                do throws(StoreError) {
                    try store.recordLifecycleEvent(appID: session.appID, event: event, at: Clock.now())
                } catch {
                    logStorageFailure("recording a lifecycle event of \(session.appID)", error)
                }
                events.emit(kind: "lifecycle", appID: session.appID,
                            data: ["event": .string(event), "detail": call.parameters["detail"] ?? .null, "session": .string(session.id)])
                reply.reply()
            },
            "Subscribe": VarlinkMethod(requiresMore: true) { [unowned self] call, context, reply throws(VarlinkError) in
                let session = try session(of: call, in: context)
                session.subscription = reply
                reply.onCancel = { [weak session] in session?.subscription = nil }
                sendUpdate(to: session, reason: "current", view: AppView(of: session.appID, in: active.compiled))
            },
            "AcknowledgeWipe": VarlinkMethod { [unowned self] call, context, reply throws(VarlinkError) in
                try acknowledgeWipe(call, context, reply)
            },
            "ReportFeedback": VarlinkMethod { [unowned self] call, context, reply throws(VarlinkError) in
                try reportFeedback(call, context, reply)
            },
        ]
    }

    private func register(_ call: VarlinkCall, _ context: ConnectionContext, _ reply: VarlinkReplyHandle) throws(VarlinkError) {
        let appID = call.parameters["appId"]?.stringValue ?? ""
        let appVersion = call.parameters["version"]?.stringValue
        let fields = [(DaemonEventField.appID, appID)] + peerFields(context.peer)
        guard let entry = active.compiled.appPolicy(appID) else {
            log(.registrationRefusedUnknown, "Registration refused: \(appID) is not in policy", fields + policyFields())
            events.emit(kind: "registration", appID: appID, data: ["outcome": "unknownApp", "pid": .number(Int(context.peer.pid))])
            throw AgentError.unknownApp(appID)
        }
        if case .mismatch(let why) = verifyIdentity(of: context.peer, against: entry.match, appID: appID) {
            log(.registrationRefusedIdentity, "Registration refused for \(appID): \(why)", fields)
            events.emit(kind: "registration", appID: appID,
                        data: ["outcome": "identityMismatch", "reason": .string(why), "pid": .number(Int(context.peer.pid))])
            throw AgentError.identityMismatch(appID, why)
        }
        guard context.sessions.count < Self.maxSessionsPerConnection else {
            throw AgentError.invalidParameter("appId", "a connection may hold at most \(Self.maxSessionsPerConnection) sessions")
        }
        let now = Clock.now()
        let session = AgentSession(id: SessionID.make(), appID: appID, peer: context.peer, appVersion: appVersion,
                                   registeredAt: now)
        context.sessions[session.id] = session
        sessionsByApp[appID, default: [:]][session.id] = session
        sessionCount += 1
        do {
            try store.recordRegistration(appID: appID, at: now, appVersion: appVersion, pid: context.peer.pid,
                                         uid: context.peer.uid)
        } catch {
            logStorageFailure("recording the registration of \(appID)", error)
        }
        log(.appRegistered, "\(appID) registered (state \(entry.state.rawValue))",
            fields + [(DaemonEventField.session, session.id)] + policyFields())
        events.emit(kind: "registration", appID: appID,
                    data: ["outcome": "registered", "session": .string(session.id), "pid": .number(Int(context.peer.pid)),
                           "version": appVersion.map(JSONValue.string) ?? .null])
        let view = AppView(of: appID, in: active.compiled)
        session.lastView = view
        var answer = subscriptionFields(for: session, view: view)
        answer["session"] = .string(session.id)
        reply.reply(answer)
        updateStatus()
    }

    private func acknowledgeWipe(_ call: VarlinkCall, _ context: ConnectionContext, _ reply: VarlinkReplyHandle) throws(VarlinkError) {
        let session = try session(of: call, in: context)
        let directiveID = call.parameters["directiveId"]?.stringValue ?? ""
        let failed = call.parameters["outcome"]?.stringValue == "failed"
        let message = call.parameters["message"]?.stringValue
        let fields = [(DaemonEventField.appID, session.appID), (DaemonEventField.session, session.id), ("DIRECTIVE_ID", directiveID)]
        do throws(StoreError) {
            if failed {
                // The data is still there: the directive stays pending and the failure is kept
                // as feedback for the administrator.
                guard try store.wipes(appID: session.appID).contains(where: { $0.id == directiveID }) else {
                    throw StoreError.unknownWipe(id: directiveID, appID: session.appID)
                }
                try store.recordFeedback(appID: session.appID, key: "wipe", severity: .error,
                                         message: String((message ?? "wipe \(directiveID) failed").prefix(1000)),
                                         data: JSONValue.object(["directiveId": .string(directiveID)]).serializedString(),
                                         at: Clock.now())
                log(.wipeAcknowledged, "\(session.appID) could not wipe its data for directive \(directiveID): \(message ?? "no reason given")",
                    fields + [("OUTCOME", "failed")])
            } else {
                _ = try store.acknowledgeWipe(id: directiveID, appID: session.appID, at: Clock.now())
                log(.wipeAcknowledged, "\(session.appID) wiped its data for directive \(directiveID)", fields + [("OUTCOME", "completed")])
            }
        } catch {
            throw agentError(for: error, parameter: "directiveId")
        }
        events.emit(kind: "wipe", appID: session.appID,
                    data: ["directiveId": .string(directiveID), "outcome": .string(failed ? "failed" : "completed")])
        reply.reply()
    }

    private func reportFeedback(_ call: VarlinkCall, _ context: ConnectionContext, _ reply: VarlinkReplyHandle) throws(VarlinkError) {
        let session = try session(of: call, in: context)
        let key = call.parameters["key"]?.stringValue ?? ""
        let message = call.parameters["message"]?.stringValue ?? ""
        let data = call.parameters["data"]
        let now = Clock.now()
        do {
            let severity = try FeedbackSeverity(parsing: call.parameters["severity"]?.stringValue ?? "")
            try store.recordFeedback(appID: session.appID, key: key, severity: severity, message: message,
                                     data: data.map { $0.serializedString() }, at: now)
            // Acknowledgement of a policy change: key "policy", data {"version", "result"}.
            if key == "policy", let version = data?["version"]?.stringValue, let result = data?["result"]?.stringValue {
                let status = try PolicyAcknowledgementStatus(parsing: result)
                try store.recordPolicyAcknowledgement(appID: session.appID, policyVersion: version, status: status, at: now)
            }
        } catch {
            throw agentError(for: error, parameter: "key")
        }
        events.emit(kind: "feedback", appID: session.appID,
                    data: ["key": .string(key), "message": .string(message), "data": data ?? .null])
        reply.reply()
    }

    /// The caller's session named by the `session` parameter; only sessions opened on this
    /// connection count, so a leaked id is useless elsewhere.
    private func session(of call: VarlinkCall, in context: ConnectionContext) throws(VarlinkError) -> AgentSession {
        let id = call.parameters["session"]?.stringValue ?? ""
        guard let session = context.sessions[id] else { throw AgentError.invalidSession(id) }
        return session
    }

    func action(of call: VarlinkCall) throws(VarlinkError) -> Action {
        let text = call.parameters["action"]?.stringValue ?? ""
        guard let action = Action(rawValue: text) else {
            throw AgentError.invalidParameter("action", "expected one of \(Action.allCases.map(\.rawValue).joined(separator: ", ")), got \"\(text.prefix(64))\"")
        }
        return action
    }

    /// Counts a decision, logs it (denials always, allowed ones at debug level) and tells
    /// `Events` subscribers.
    func record(_ decision: Decision, for request: DecisionRequest, peer: PeerIdentity?, session: String?) {
        if decision.allowed { decisionsAllowed += 1 } else { decisionsDenied += 1 }
        let kind: DaemonEvent = decision.allowed ? .decisionAllowed : .decisionDenied
        if logger.isEnabled(kind.priority) {
            var fields: [(String, String)] = [
                (DaemonEventField.appID, request.app), (DaemonEventField.action, request.action.rawValue),
                (DaemonEventField.decision, decision.allowed ? "allowed" : "denied"), (DaemonEventField.rule, decision.rule),
                (DaemonEventField.policyVersion, active.version),
            ]
            if let target = request.target { fields.append((DaemonEventField.target, target)) }
            if let session { fields.append((DaemonEventField.session, session)) }
            if let peer { fields += peerFields(peer) }
            log(kind, "\(decision.allowed ? "Allowed" : "Denied") \(request.action.rawValue) for \(request.app): \(decision.reason)", fields)
        }
        events.emit(kind: "decision", appID: request.app, data: [
            "action": .string(request.action.rawValue), "target": request.target.map(JSONValue.string) ?? .null,
            "allowed": .bool(decision.allowed), "rule": .string(decision.rule), "reason": .string(decision.reason),
        ])
    }

    private func agentError(for error: StoreError, parameter: String) -> VarlinkError {
        switch error {
        case .unknownWipe(let id, _): return AgentError.invalidParameter("directiveId", "no wipe directive \(id) for this app")
        case .invalidField(let field, let reason): return AgentError.invalidParameter(field, reason)
        case .limitExceeded(let field, let limit): return AgentError.invalidParameter(field, "limit of \(limit) reached")
        default:
            logStorageFailure("serving an app", error)
            return AgentError.storageFailure("\(error)")
        }
    }
}

/// The errors of `io.proctor.Agent`.
enum AgentError {
    static func unknownApp(_ appID: String) -> VarlinkError {
        VarlinkError(name: "io.proctor.Agent.UnknownApp", parameters: ["appId": .string(appID)])
    }
    static func identityMismatch(_ appID: String, _ reason: String) -> VarlinkError {
        VarlinkError(name: "io.proctor.Agent.IdentityMismatch", parameters: ["appId": .string(appID), "reason": .string(reason)])
    }
    static func invalidSession(_ session: String) -> VarlinkError {
        VarlinkError(name: "io.proctor.Agent.InvalidSession", parameters: ["session": .string(String(session.prefix(64)))])
    }
    static func invalidParameter(_ parameter: String, _ reason: String) -> VarlinkError {
        VarlinkError(name: "io.proctor.Agent.InvalidParameter", parameters: ["parameter": .string(parameter), "reason": .string(reason)])
    }
    static func storageFailure(_ message: String) -> VarlinkError {
        VarlinkError(name: "io.proctor.Agent.StorageFailure", parameters: ["message": .string(message)])
    }
}
