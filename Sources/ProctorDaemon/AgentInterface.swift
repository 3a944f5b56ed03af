import JSONCore
import LinuxIO
import ProctorPolicy
import ProctorProtocol
import ProctorStore
import Varlink

/// `io.proctor.Agent`: what managed apps call, through ProctorKit.
extension Daemon {
    /// Sessions one connection may open (an app registers once; a few for helpers).
    static let maxSessionsPerConnection = 16
    /// The largest `detail` a `ReportEvent` may carry (serialized).
    static let maxEventDetailBytes = 4096

    func agentMethods() -> [String: VarlinkMethod<ConnectionContext>] {
        var table = MethodTable<ConnectionContext>()
        table.answer(Agent.Register.self) { [unowned self] request, call, context throws(VarlinkError) in
            try register(request, sentBy: call.sender, context)
        }
        table.answer(Agent.Decide.self) { [unowned self] request, call, context throws(VarlinkError) in
            let session = try session(request.session, sentBy: call.sender, in: context)
            return CompiledPolicy.withUTF8(of: request.target) { target in
                Agent.Decide.Reply(Decision(decide(request.action, target: target, size: request.size, for: session),
                                            askingApp: session.appID))
            }
        }
        table.answer(Agent.ReportEvent.self) { [unowned self] request, call, context throws(VarlinkError) in
            let session = try session(request.session, sentBy: call.sender, in: context)
            // Kept in the event history: bounded, so a flood of reports cannot fill memory or disk.
            if let detail = request.detail, JSONValue.object(detail).serialized().count > Self.maxEventDetailBytes {
                throw AgentError.invalidParameter("detail", "must be at most \(Self.maxEventDetailBytes) bytes of JSON")
            }
            var kind = request.event == "dataActionDenied" ? EventKind.denial : EventKind.lifecycle
            if request.event == Agent.fileExportEnforcementEvent {
                session.fileExportEnforcement = try Self.fileExportEnforcement(request.detail)
                kind = EventKind.enforcement
            }
            // Recorded by the batched history write (Daemon+EventHistory), never by a write of
            // its own: an app reporting at will must not make the loop wait on the disk.
            events.emit(kind: kind, appID: session.appID,
                        occurredAt: request.occurredAt.flatMap(RFC3339.milliseconds),
                        data: ["event": .string(request.event), "detail": request.detail.map(JSONValue.object) ?? .null,
                               "session": .string(session.id)])
            onReport?(session.appID, request)
            return NoFields()
        }
        table.stream(Agent.Subscribe.self) { [unowned self] request, call, context, reply throws(VarlinkError) in
            let session = try session(request.session, sentBy: call.sender, in: context)
            reply.onCancel = { [weak session] in session?.subscription = nil }
            perform(registry.subscribe(session, through: reply))
        }
        table.answer(Agent.AcknowledgeWipe.self) { [unowned self] request, call, context throws(VarlinkError) in
            try acknowledgeWipe(request, try session(request.session, sentBy: call.sender, in: context))
            return NoFields()
        }
        table.answer(Agent.ReportFeedback.self) { [unowned self] request, call, context throws(VarlinkError) in
            try reportFeedback(request, try session(request.session, sentBy: call.sender, in: context))
            return NoFields()
        }
        table.answer(Agent.GetDataKey.self) { [unowned self] request, call, context throws(VarlinkError) in
            try releaseDataKey(to: try session(request.session, sentBy: call.sender, in: context))
        }
        table.answer(Agent.GetInfo.self) { [unowned self] _, _, _ throws(VarlinkError) in
            Agent.GetInfo.Reply(viewSigningKey: viewSigner.publicKeyText)
        }
        return table.methods
    }

    /// `Decide`'s handler once the caller's session is found, whichever way the call came: its
    /// bytes read straight into the request (`addAgentDirectMethods`, a call in its plain
    /// form) or through the general path. The decision is the reply: the direct path writes
    /// it as bytes, the general one as `Agent.Decide.Reply`. The target is given as its UTF-8
    /// bytes, which is how the engine reads it: a `String` of it is made only for a decision
    /// that is logged or kept (`record`).
    private func decide(_ action: Action, target: UnsafeBufferPointer<UInt8>?, size: Int?, for session: AgentSession)
        -> EngineDecision {
        // By its parts: a `DecisionRequest` would copy, then free, the app id, target and version.
        // Only a launch reads the version, and passing it copies it (two arrays). Unretained: the
        // registry holds the policy, and only the loop replaces it, never during a call.
        let decision = active.compiled.unretained.engineDecision(app: session.appID, remembering: &session.policyPlace.pointee,
                                                                 action, target: target, size: size,
                                                                 appVersion: action == .launch ? session.semanticVersion : nil)
        record(.engine(decision), app: session.appID, action, target: target, uid: session.peer.uid,
               closingFields: session.decisionLogFields)
        return decision
    }

    /// The Agent methods also answered from their call's bytes (`VarlinkDirectMethod`): `Decide`,
    /// the call apps make all the time.
    func addAgentDirectMethods(to service: VarlinkService<ConnectionContext>) {
        // Unretained: the service is the daemon's, and whatever serves its calls holds the
        // daemon too (its agent server; `SocketlessDaemon`'s connections), so the daemon
        // outlives every call. `unowned` cost two atomic operations per use, `unowned(unsafe)`
        // a retain and a release.
        let daemon = Unmanaged.passUnretained(self)
        // The caller most likely names the session it named last: compared in place by the reader.
        let read = { (parameters: UnsafeRawBufferPointer, context: ConnectionContext) in
            Agent.Decide.PlainRequest.read(parameters, knownSessionID: context.lastSessionID)
        }
        service.addDirectMethod(Agent.Decide.qualifiedName, VarlinkDirectMethod(read: read) {
            request, sender, context throws(VarlinkError) in
            try daemon._withUnsafeGuaranteedRef { daemon in
                Result { () throws(VarlinkError) in try daemon.decide(request, sentBy: sender, in: context) }
            }.get()
        })
    }

    /// A plain `Decide` call (`addAgentDirectMethods`).
    private func decide(_ request: Agent.Decide.PlainRequest, sentBy sender: SenderCredentials?,
                        in context: ConnectionContext) throws(VarlinkError) -> Agent.Decide.DirectReply {
        let session = try verified(context.session(of: request), named: String(decoding: request.session, as: UTF8.self),
                                   sentBy: sender)
        // The session outlives the call, and its replies are all about its app.
        return Agent.Decide.DirectReply(decide(request.action, target: request.target, size: request.size, for: session),
                                        keptIn: session.decideReplies)
    }

    /// The `detail` of a `fileExportEnforcement` report, as `proctorctl app` shows it.
    private static func fileExportEnforcement(_ detail: [String: JSONValue]?) throws(VarlinkError) -> Admin.FileExportEnforcement {
        guard let mode = detail?["enforcement"]?.stringValue.flatMap(Admin.FileExportEnforcement.Mode.init(rawValue:)) else {
            throw AgentError.invalidParameter("detail", "a fileExportEnforcement event needs \"enforcement\": \"kernel\" or \"advisory\"")
        }
        let reason = detail?["reason"]?.stringValue.map { String($0.prefix(1000)) }
        return Admin.FileExportEnforcement(mode: mode, landlockABI: detail?["landlockABI"]?.intValue, reason: reason,
                                           at: Clock.rfc3339(Clock.now()))
    }

    /// Registers the process that sent `Register` (`sender`), which need not be the one that
    /// connected: a connection can be handed on by fork and exec, so the identity is checked
    /// on the message's sender, when it is sent.
    private func register(_ request: Agent.Register.Request, sentBy sender: SenderCredentials?,
                          _ context: ConnectionContext) throws(VarlinkError) -> Agent.Register.Reply {
        let appID = request.appId
        // No policy can hold an id that is not one (the policy reader applies the same rule): such a
        // call is refused before its id is logged or recorded, which anyone could otherwise do
        // with an id of up to a message's size (a MiB) at each refusal the limiter lets through.
        guard PolicySyntax.isAppID(appID) else {
            throw AgentError.invalidParameter("appId", "expected a reverse-DNS app id (letters, digits and \"-\" in two or "
                + "more dot-separated parts) of at most \(PolicyLimits.maxAppIDBytes) bytes")
        }
        // Kept with the session, in its registration event and in the store: bounded as the store bounds it.
        if let version = request.version {
            do throws(StoreError) { try StateStore.checkAppVersion(version) } catch { throw agentError(for: error, parameter: "version") }
        }
        let caller: PeerIdentity
        var unverifiable: UnverifiableSender?
        do {
            caller = try PeerIdentity(verifyingSender: try senderWithProcess(sender, context))
        } catch {
            // Only said in the refusal; the in-process test kit, which verifies no one, goes on.
            (caller, unverifiable) = (context.peer, error)
        }
        let fields = [(DaemonEventField.appID, appID)] + peerFields(caller)
        // Refusals are logged and told to `Events` subscribers a burst per uid at a time, the
        // rest counted (`logs(_:uid:)`): anyone may send Register in a loop.
        guard let entry = active.compiled.appPolicy(appID) else {
            counters.countRefusal(.unknownApp)
            if logs(.refusedRegistration, uid: caller.uid) {
                log(.registrationRefusedUnknown, "Registration refused: \(appID) is not in policy", fields + policyFields())
                events.emit(kind: EventKind.registration, appID: appID,
                            data: ["outcome": "unknownApp", "pid": .number(Int(caller.pid))])
            }
            throw AgentError.unknownApp(appID)
        }
        if verifiesCallers {
            let verdict = unverifiable.map { IdentityCheck.Verdict.mismatch($0.reason) }
                ?? verifyIdentity(of: caller, against: entry.match, appID: appID)
            if case .mismatch(let why) = verdict {
                counters.countRefusal(.identityMismatch)
                if logs(.refusedRegistration, uid: caller.uid) {
                    log(.registrationRefusedIdentity, "Registration refused for \(appID): \(why)", fields)
                    events.emit(kind: EventKind.registration, appID: appID,
                                data: ["outcome": "identityMismatch", "reason": .string(why), "pid": .number(Int(caller.pid))])
                }
                throw AgentError.identityMismatch(appID, why)
            }
        }
        guard context.sessions.count < Self.maxSessionsPerConnection else {
            counters.countRefusal(.sessionLimit)
            throw AgentError.invalidParameter("appId", "a connection may hold at most \(Self.maxSessionsPerConnection) sessions")
        }
        let now = Clock.now()
        let process = sender?.process ?? sender.flatMap(context.registeredProcess)
        let session = AgentSession(id: SessionID.make(), appID: appID, peer: caller, process: process,
                                   appVersion: request.version, registeredAt: now)
        context.sessions[session.id] = session
        // From now on calls are checked against the registered process, which needs no pidfd
        // per message (AgentSession.isRegisteringProcess). Where the watch cannot take it,
        // its pidfd is asked instead.
        if let process {
            try? processExits.watch(process)
            context.receiveSenderProcesses(false)
        }
        let (reply, effects) = registry.register(session)
        do {
            try store.recordRegistration(appID: appID, at: now, appVersion: request.version, pid: caller.pid,
                                         uid: caller.uid)
        } catch {
            logStorageFailure("recording the registration of \(appID)", error)
        }
        log(.appRegistered, "\(appID) registered (state \(entry.state.rawValue))",
            fields + [(DaemonEventField.session, session.id)] + policyFields())
        // A blocked or retired app gets its session (to learn its state) but may not run:
        // its launch is refused, which is what the event says.
        events.emit(kind: EventKind.registration, appID: appID,
                    data: ["outcome": .string(entry.state == .authorized ? "registered" : "launchRefused"),
                           "state": .string(entry.state.rawValue), "session": .string(session.id),
                           "pid": .number(Int(caller.pid)), "version": request.version.map(JSONValue.string) ?? .null])
        perform(effects)
        // The launch verdict the SDK acts on is a decision like any other: logged and counted.
        let launch = reply.snapshot.launch
        record(.given(Decision(allowed: launch.allowed, rule: launch.rule, reason: launch.reason)),
               app: session.appID, .launch, target: nil, uid: session.peer.uid,
               closingFields: [(DaemonEventField.session, session.id)] + peerFields(context.peer))
        shredDataKeysOnViolation(of: session, verdict: launch)
        return reply
    }

    /// `sender` with a pidfd to verify it on: the one the kernel sent with the message, or,
    /// on a connection that no longer receives them, the pidfd of the session's process it
    /// is known to be. A sender that is neither cannot be verified: the connection gets
    /// pidfds again, so the same `Register` sent once more is.
    private func senderWithProcess(_ sender: SenderCredentials?,
                                   _ context: ConnectionContext) throws(UnverifiableSender) -> SenderCredentials? {
        guard let sender, sender.process == nil, !context.receivesSenderProcesses else { return sender }
        if let process = context.registeredProcess(of: sender) {
            return SenderCredentials(pid: sender.pid, uid: sender.uid, gid: sender.gid, process: process,
                                     receipt: sender.receipt)
        }
        context.receiveSenderProcesses(true)
        throw UnverifiableSender(reason: "pid \(sender.pid) is not the process that registered on this connection, "
            + "and its message came without the pidfd that verifies it; send Register again, or on a connection of its own")
    }

    private func acknowledgeWipe(_ request: Agent.AcknowledgeWipe.Request, _ session: AgentSession) throws(VarlinkError) {
        let directiveID = request.directiveId
        let failed = request.outcome == .failed
        let fields = [(DaemonEventField.appID, session.appID), (DaemonEventField.session, session.id), ("DIRECTIVE_ID", directiveID)]
        do throws(StoreError) {
            if failed {
                // The data is still there: the directive stays pending and the failure is kept
                // as feedback for the administrator.
                guard try store.wipes(appID: session.appID).contains(where: { $0.id == directiveID }) else {
                    throw StoreError.unknownWipe(id: directiveID, appID: session.appID)
                }
                // What is kept, and logged: the app's message (up to a message's MiB) cut to what the store takes.
                let message = request.message.map { String(String.UnicodeScalarView($0.unicodeScalars.prefix(1000))) }
                try store.recordFeedback(appID: session.appID, key: "wipe", severity: .error,
                                         message: message ?? "wipe \(directiveID) failed",
                                         data: JSONValue.object(["directiveId": .string(directiveID)]).serializedString(),
                                         at: Clock.now())
                log(.wipeAcknowledged,
                    "\(session.appID) could not wipe its data for directive \(directiveID): \(message ?? "no reason given")",
                    fields + [("OUTCOME", "failed")])
            } else {
                _ = try store.acknowledgeWipe(id: directiveID, appID: session.appID, at: Clock.now())
                log(.wipeAcknowledged, "\(session.appID) wiped its data for directive \(directiveID)", fields + [("OUTCOME", "completed")])
            }
        } catch {
            throw agentError(for: error, parameter: "directiveId")
        }
        events.emit(kind: EventKind.wipe, appID: session.appID,
                    data: ["directiveId": .string(directiveID), "outcome": .string(failed ? "failed" : "completed")])
        onReport?(session.appID, request)
    }

    private func reportFeedback(_ request: Agent.ReportFeedback.Request, _ session: AgentSession) throws(VarlinkError) {
        let data = request.data.map(JSONValue.object)
        let now = Clock.now()
        do {
            let severity = try FeedbackSeverity(parsing: request.severity.rawValue)
            try store.recordFeedback(appID: session.appID, key: request.key, severity: severity, message: request.message,
                                     data: data.map { $0.serializedString() }, at: now)
            // Acknowledgement of a policy change: key "policy", data {"version", "result"}.
            if request.key == "policy", let version = data?["version"]?.stringValue, let result = data?["result"]?.stringValue {
                let status = try PolicyAcknowledgementStatus(parsing: result)
                try store.recordPolicyAcknowledgement(appID: session.appID, policyVersion: version, status: status, at: now)
            }
        } catch {
            throw agentError(for: error, parameter: "key")
        }
        events.emit(kind: EventKind.feedback, appID: session.appID,
                    data: ["key": .string(request.key), "message": .string(request.message), "data": data ?? .null])
        onReport?(session.appID, request)
    }

    /// The caller's session `id`. Only sessions opened on this connection count, so a leaked
    /// id is useless elsewhere; and only the process that registered may use it (the sender
    /// of the call, `sender`, stamped by the kernel), so a process that hands its connection on — or
    /// keeps it while a child registers as a trusted binary — cannot act as the app.
    private func session(_ id: String, sentBy sender: SenderCredentials?,
                         in context: ConnectionContext) throws(VarlinkError) -> AgentSession {
        try verified(context.session(id), named: id, sentBy: sender)
    }

    /// `found`, the session `id` names, if `sender` may use it: consumed, so returning it
    /// retains it no more.
    private func verified(_ found: consuming AgentSession?, named id: @autoclosure () -> String,
                          sentBy sender: SenderCredentials?) throws(VarlinkError) -> AgentSession {
        guard let session = found else { throw AgentError.invalidSession(id()) }
        if verifiesCallers, !session.isRegisteringProcess(sender) {
            let from = sender.map { "pid \($0.pid)" } ?? "more than one process"
            throw AgentError.identityMismatch(session.appID, "session \(session.id) belongs to the process that registered it "
                + "(pid \(session.peer.pid)); this call came from \(from)")
        }
        return session
    }

    /// Counts a decision, logs it (denials a burst per uid at a time, `logs(_:uid:)`; allowed
    /// ones at debug level), keeps denials in the event history and tells `Events` subscribers.
    /// `closingFields` end the log line (the session's and the peer's,
    /// `AgentSession.decisionLogFields`). The loop only makes
    /// a `DecisionRecord`, a plain value that a denial's event carries in the history queue,
    /// where the log hand-off finds it too (`logQueuedDenial`): the log writer's thread renders
    /// the lines, the history write or a subscriber's event the rule.
    /// An allowed decision that is neither logged nor streamed is only counted, and its target
    /// (UTF-8 bytes) is made a `String` only for a decision that is.
    func record(_ decision: DecisionRecord.Outcome, app: AppID, _ action: Action, target: UnsafeBufferPointer<UInt8>?,
                uid: UInt32,
                closingFields: @autoclosure () -> [(String, String)]) {
        counters.countDecision(action, allowed: decision.allowed)
        let kind: DaemonEvent = decision.allowed ? .decisionAllowed : .decisionDenied
        let logged = logger.isEnabled(kind.priority) && (decision.allowed || logs(.denial, uid: uid))
        // Allowed decisions are routine (debug level in the journal too): streamed to `Events`
        // subscribers but not kept, or a busy machine would push everything else out of the
        // bounded history within seconds and write it continuously. Denials are kept.
        let streamed = !decision.allowed || events.hasSubscribers
        guard logged || streamed else { return }
        let record = DecisionRecord(decision, app: app, action: action.rawValue, target: target.map(Self.recordedTarget),
                                    policyVersion: logged ? active.version : "", closingFields: logged ? closingFields() : [],
                                    logged: logged)
        guard !decision.allowed else {
            if logged { logDeferred(kind, DecisionLines([record])) }
            if streamed { events.emitDecision(consume record, recorded: false) }
            return
        }
        // Consumed on its one path: moved into the history queue, not copied.
        events.emitDecision(consume record, recorded: true)
        if logged { logQueuedDenial() }  // its line is made from the queued event's record
    }

    /// The most of a `Decide` target a decision's log line and event keep: as long as the
    /// longest target a decision reads (`file.export`'s path).
    static let maxRecordedTargetBytes = CompiledPolicy.maxExportPathBytes

    /// `target`, or when longer than `maxRecordedTargetBytes` its first whole characters within
    /// them and `… (N bytes)`. The app chooses it, up to a message's size (1 MiB): kept whole, a
    /// flood of denials would fill the log queue (4096 entries) and the event history (100 000).
    /// `target` is valid UTF-8.
    static func recordedTarget(_ target: UnsafeBufferPointer<UInt8>) -> DecisionRecord.Target {
        guard target.count > maxRecordedTargetBytes else { return DecisionRecord.Target(target) }
        var end = maxRecordedTargetBytes
        while UTF8.isContinuation(target[end]) { end -= 1 }
        return DecisionRecord.Target(String(decoding: target[..<end], as: UTF8.self) + "\u{2026} (\(target.count) bytes)")
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
