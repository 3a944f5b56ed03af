import Glibc
import JSONCore
import ProctorPolicy
import ProctorProtocol
import ProctorStore
import Varlink

/// The Admin methods that do more than one thing.
extension Daemon {
    /// A policy pushed over the socket, checked exactly as a file would be. Its problems
    /// carry no line and column: the document has no file the admin could open.
    static func parsePushedPolicy(_ document: JSONValue) -> Result<CanonicalPolicy, PolicyProblems> {
        do {
            let policy = CanonicalPolicy(try Policy.parse(document.serialized(), source: nil))
            if let problem = Policy.bundleSizeProblem(canonicalSize: policy.text.utf8.count, source: nil) {
                return .failure(PolicyProblems([problem]))
            }
            return .success(policy)
        } catch {
            return .failure(PolicyProblems(error.problems.map { problem in
                var problem = problem
                problem.location = nil
                return problem
            }))
        }
    }

    func status() -> Admin.Status.Reply {
        status(appsKnown: appsKnown())
    }

    /// The apps named in policy or ever seen by the store, counted without a query: the store
    /// keeps its known apps in memory (`StateStore.knownAppCount`), and the tally looks up in
    /// the policy only the ones new since it last counted, or all of them once after a policy
    /// change. A store that cannot be read counts the policy's apps alone, as a failed query did.
    func appsKnown() -> Int {
        let compiled = active.compiled
        if !knownAppTally.policySHA256.hasSameBytes(as: active.sha256) {
            knownAppTally = KnownAppTally(policySHA256: active.sha256)
        }
        do throws(StoreError) {
            for appID in try store.knownApps(from: knownAppTally.counted) {
                knownAppTally.counted += 1
                if compiled.state(of: appID) == nil { knownAppTally.outsidePolicy += 1 }
            }
        } catch {
            return compiled.appCount
        }
        return compiled.appCount + knownAppTally.outsidePolicy
    }

    /// `Status` with `appsKnown` counted by the caller: from memory only.
    func status(appsKnown: Int) -> Admin.Status.Reply {
        let uptime = Double(Clock.monotonicMicroseconds() - startedMonotonic) / 1_000_000
        return Admin.Status.Reply(
            version: Self.version, startedAt: Clock.rfc3339(startedAt), uptimeSeconds: uptime, policy: active.info,
            lastReload: lastReload?.result,
            counts: Admin.Counts(appsKnown: appsKnown, appsConnected: registry.sessionsByApp.count, sessions: registry.sessionCount,
                                 decisionsAllowed: counters.decisionsAllowed, decisionsDenied: counters.decisionsDenied,
                                 decisions: counters.decisionCounts, registrationsRefused: counters.refusalCounts,
                                 logMessagesDropped: logger.droppedCount, logSinkFailures: logger.counters.sinkFailures,
                                 storageFailures: counters.storageFailures, eventsDropped: events.droppedCount),
            fleet: fleetStatus)
    }

    /// Apps named in policy or ever seen registering, sorted.
    func knownAppIDs() throws(VarlinkError) -> [AppID] {
        (active.compiled.appIDs + (try seenAppsOutsidePolicy())).sorted()
    }

    /// Apps the store has seen (registered, reported, acknowledged, wiped) that the policy in
    /// force does not name: a lookup each, so the listing does not sort the policy's apps twice.
    private func seenAppsOutsidePolicy() throws(VarlinkError) -> [AppID] {
        do { return try Self.appsOutside(active.compiled, seenIn: store) } catch { throw adminError(for: error, while: "listing apps") }
    }

    static func appsOutside(_ compiled: CompiledPolicy, seenIn store: StateStore) throws(StoreError) -> [AppID] {
        try store.knownApps().filter { compiled.state(of: $0) == nil }
    }

    func appSummary(_ appID: AppID) -> Admin.AppSummary {
        let registration = (try? store.app(appID: appID))?.registration
        let state = active.compiled.state(of: appID)
        return Admin.AppSummary(appId: appID, inPolicy: state != nil, state: state,
                                connectedSessions: registry.sessionsByApp[appID]?.count ?? 0,
                                lastSeen: registration.map { Clock.rfc3339($0.at) }, version: registration?.appVersion)
    }

    func appDetail(_ appID: AppID) throws(VarlinkError) -> Admin.AppDetail {
        let inventory: AppInventory?, dataKeys: [DataKeyRecord]
        do { inventory = try store.app(appID: appID) } catch { throw adminError(for: error, while: "reading app \(appID)") }
        do { dataKeys = try store.dataKeys(appID: appID) } catch { throw adminError(for: error, while: "reading data keys of \(appID)") }
        guard let detail = Self.appDetail(appID, in: active, inventory: inventory, dataKeys: dataKeys, memory: appMemory(of: appID))
        else { throw AdminError.unknownApp(appID) }
        return detail
    }

    /// What `appDetail` takes from the loop's memory besides the policy: `appID`'s sessions,
    /// and its latest lifecycle event still waiting for the history's write.
    func appMemory(of appID: AppID) -> AppMemory {
        let sessions = (registry.sessionsByApp[appID]?.values.sorted { $0.registeredAt < $1.registeredAt } ?? []).map { session in
            Admin.Session(id: session.id, pid: Int(session.peer.pid), uid: Int(session.peer.uid),
                          executable: session.peer.executable ?? "", registeredAt: Clock.rfc3339(session.registeredAt),
                          subscribed: session.subscription != nil, fileExportEnforcement: session.fileExportEnforcement)
        }
        let queued = events.pending.last { $0.kind == EventKind.lifecycle && $0.appID == appID }
        return AppMemory(sessions: sessions, queuedLifecycleEvent: queued.flatMap(Self.lifecycleEvent))
    }

    /// A queued event's `Admin.LifecycleEvent` (nil if it names none).
    static func lifecycleEvent(_ queued: EventFeed.Pending) -> Admin.LifecycleEvent? {
        queued.data["event"]?.stringValue.map { Admin.LifecycleEvent(at: Clock.rfc3339(queued.occurredAt), event: $0) }
    }

    /// `appID`'s detail (`GetApp`, and each app of a status document) from what the store holds
    /// about it and what the loop's memory does; nil when neither `active` nor the store knows it.
    /// Pure, so a worker can build it from a snapshot.
    static func appDetail(_ appID: AppID, in active: ActivePolicy, inventory: AppInventory?, dataKeys: [DataKeyRecord],
                          memory: AppMemory) -> Admin.AppDetail? {
        let view = AppView(of: appID, in: active.compiled)
        guard view != nil || inventory != nil else { return nil }
        var detail = Admin.AppDetail(
            appId: appID, inPolicy: view != nil, state: view?.state, sessions: memory.sessions,
            lastRegistration: inventory?.registration.map(Admin.Registration.init),
            lastEvent: memory.queuedLifecycleEvent
                ?? inventory?.lastEvent.map { Admin.LifecycleEvent(at: Clock.rfc3339($0.at), event: $0.event) },
            config: view?.config ?? [:], dlp: view?.dlp ?? [:], compliance: view?.compliance ?? [:],
            feedback: inventory?.feedback.map(Admin.Feedback.init) ?? [],
            acknowledgements: inventory?.acknowledgements.map(Admin.PolicyAcknowledgement.init) ?? [],
            wipes: inventory?.wipes.map(Admin.WipeRecord.init) ?? [])
        detail.dataKeys = dataKeyStates(dataKeys)
        detail.policyVersion = active.version
        if view != nil, let registration = inventory?.registration {
            // The engine's own launch rule, for the version the app last registered with.
            let launch = active.compiled.decide(DecisionRequest(app: appID, action: .launch, target: nil, size: nil,
                                                                appVersion: registration.appVersion.flatMap(SemanticVersion.init)))
            let versionRule = launch.violation != nil
            detail.complianceState = Admin.ComplianceState(compliant: !versionRule,
                                                           reason: versionRule ? launch.reason : "meets its compliance settings")
        }
        return detail
    }

    /// Validate and compile off the loop, then on the loop persist (one transaction,
    /// fsynced), swap and broadcast, and reply: an apply that was acknowledged survives any
    /// crash, and a failed one changes nothing. Runs in turn with reloads and rollbacks.
    func applyPolicy(_ request: Admin.PolicyRequest, _ context: ConnectionContext,
                     reply: @escaping (Result<Admin.AppliedPolicy, VarlinkError>) -> Void) {
        do throws(VarlinkError) { try refuseUnsignedIfRequired(context) } catch { return reply(.failure(error)) }
        submit(.change { [unowned self] finished in
            // By bytes, as the history names versions: `!=` would take "cafe\u{301}" for "caf\u{E9}".
            if let expected = request.expectedVersion, !expected.hasSameBytes(as: active.version) {
                reply(.failure(AdminError.versionConflict(expected: expected, current: active.version)))
                return finished()
            }
            let document = JSONValue.object(request.policy)
            let directory = self.directory
            offLoop({ () -> Result<(CanonicalPolicy, ActivePolicy), PolicyProblems> in
                Self.parsePushedPolicy(document).map { policy in
                    (policy, ActivePolicy(directory: directory.map(ActivePolicy.Directory.kept), bundle: policy,
                                          bundleVersion: policy.policy.version, loadedAt: Clock.now()))
                }
            }) { [unowned self] compiled in
                reply(Result { () throws(VarlinkError) in try swapIn(compiled, force: request.force == true, pushedBy: context) })
                finished()
            }
        })
    }

    private func swapIn(_ compiled: Result<(CanonicalPolicy, ActivePolicy), PolicyProblems>, force: Bool,
                        pushedBy context: ConnectionContext) throws(VarlinkError) -> Admin.AppliedPolicy {
        let (policy, candidate) = try compiled.mapError { AdminError.invalidPolicy($0.problems) }.get()
        let version = policy.policy.version
        if !force { try refuseReusedVersion(policy) }
        let record: BundleRecord
        do {
            record = try store.apply(version: version, canonicalJSON: policy.text, sha256: policy.sha256,
                                     expectedVersion: nil, at: Clock.now(), byUID: context.peer.uid)
        } catch {
            throw adminError(for: error, while: "applying policy \(version)")
        }
        putInForce(candidate, bundle: (policy, record))
        log(.policyApplied, "Applied policy \(version) pushed by uid \(context.peer.uid)",
            policyFields() + peerFields(context.peer))
        return Admin.AppliedPolicy(version: active.version, sha256: active.sha256)
    }

    /// Throws `VersionReused` when an applied policy kept in history had `policy`'s version
    /// with other content: acknowledgements and `expectedVersion` name versions, so one
    /// version must name one content.
    private func refuseReusedVersion(_ policy: CanonicalPolicy) throws(VarlinkError) {
        let (version, sha256) = (policy.policy.version, policy.sha256)
        let earlier: BundleRecord?
        do {
            earlier = try store.otherContent(ofVersion: version, than: sha256)
        } catch {
            throw adminError(for: error, while: "reading the policy history")
        }
        if let earlier { throw AdminError.versionReused(version, sha256: sha256, earlierSha256: earlier.sha256) }
    }

    /// `Admin.RollbackPolicy`: records the rollback (so it survives a crash from here on),
    /// then reads and compiles that bundle off the loop and makes it the one in force.
    func rollBack(to version: String, _ context: ConnectionContext,
                  reply: @escaping (Result<Admin.AppliedPolicy, VarlinkError>) -> Void) {
        let record: BundleRecord
        do throws(StoreError) {
            record = try store.rollback(to: version, at: Clock.now(), byUID: context.peer.uid)
        } catch {
            return reply(.failure(adminError(for: error, while: "rolling back to \(version)")))
        }
        let directory = self.directory
        offLoop({ () -> Result<(CanonicalPolicy, ActivePolicy), PolicyProblems> in
            Result { () throws(PolicyProblems) in
                let parsed = try Policy.parse(Array(record.canonicalJSON.utf8), source: "applied bundle \(record.version)")
                let policy = CanonicalPolicy(parsed, readFrom: record)
                return (policy, ActivePolicy(directory: directory.map(ActivePolicy.Directory.kept), bundle: policy,
                                             bundleVersion: record.version, loadedAt: Clock.now()))
            }
        }) { [unowned self] compiled in
            reply(Result { () throws(VarlinkError) in
                let (policy, candidate) = try compiled.mapError { AdminError.invalidPolicy($0.problems) }.get()
                putInForce(candidate, bundle: (policy, record))
                log(.policyApplied, "Rolled back to policy \(record.version) by uid \(context.peer.uid)",
                    policyFields() + peerFields(context.peer))
                return Admin.AppliedPolicy(version: active.version, sha256: active.sha256)
            })
        }
    }

    /// Makes `candidate` (compiled with `bundle` on top) the policy in force and pushes it;
    /// the policy it replaces is freed off the loop.
    func putInForce(_ candidate: ActivePolicy, bundle: (policy: CanonicalPolicy, record: BundleRecord)) {
        let replaced = (self.bundle?.policy, active)
        self.bundle = bundle
        activate(candidate)
        releaseOffLoop(replaced)
    }

    func explainDecision(_ question: Admin.Decide.Request) -> Admin.Decide.Reply {
        let appID = question.appId
        let request = DecisionRequest(app: appID, action: question.action, target: question.target, size: question.size,
                                      appVersion: question.appVersion)
        let decision = active.compiled.decide(request)
        var explanation: [String] = []
        if let state = active.compiled.state(of: appID) {
            explanation.append("\(appID) is in policy \(active.version) with state \(state.rawValue)")
        } else {
            explanation.append("\(appID) is not in policy \(active.version): it is unmanaged")
        }
        let origin = decision.rule.hasPrefix("builtin.") ? "a built-in default (neither the app nor defaults set it)"
            : decision.rule.hasPrefix("defaults.") ? "the policy's defaults (the app does not set it)"
            : "the app's own entry"
        explanation.append("the deciding rule \(decision.rule) comes from \(origin)")
        explanation.append(decision.reason)
        if let violation = decision.violation {
            explanation.append("compliance violation: onViolation is \(violation.rawValue)")
        }
        return Admin.Decide.Reply(allowed: decision.allowed, rule: decision.rule, reason: decision.reason,
                                  explanation: explanation)
    }

    func wipe(_ appID: AppID, _ context: ConnectionContext) throws(VarlinkError) -> Admin.Wipe.Reply {
        // The store finds an app by bytes; `String`'s `==` would take "\u{212A}it" (KELVIN SIGN) for "Kit".
        let known = (try? store.knownApps().contains { $0.hasSameBytes(as: appID) }) ?? false
        guard active.compiled.state(of: appID) != nil || known else {
            throw AdminError.unknownApp(appID)
        }
        let directive: WipeDirective
        do {
            // The keys go first: when the administrator hears "issued", the data is already
            // unreadable, whether or not the app ever runs again.
            try shredDataKeys(of: appID, reason: "wiped by uid \(context.peer.uid)", waitingForReaders: true)
            directive = try store.issueWipe(appID: appID, issuedAt: Clock.now(), byUID: context.peer.uid)
        } catch {
            throw adminError(for: error, while: "recording a wipe of \(appID)")
        }
        let (deliveredTo, effects) = registry.wipeIssued(for: appID)
        perform(effects)
        log(.wipeIssued, "Wipe \(directive.id) issued for \(appID) by uid \(context.peer.uid); delivered to \(deliveredTo) session(s)",
            [(DaemonEventField.appID, appID), ("DIRECTIVE_ID", directive.id)] + peerFields(context.peer))
        events.emit(kind: EventKind.wipe, appID: appID, data: ["directiveId": .string(directive.id), "deliveredTo": .number(deliveredTo)])
        return Admin.Wipe.Reply(directiveId: directive.id, deliveredTo: deliveredTo)
    }

    /// Pushes the payload to the app's subscribed sessions; when there are none, queues it
    /// durably for the app's next registration (until its time to live runs out).
    func notify(_ request: Admin.Notify.Request, _ context: ConnectionContext) throws(VarlinkError) -> Admin.Notify.Reply {
        let appID = request.appId
        guard active.compiled.state(of: appID) != nil else { throw AdminError.unknownApp(appID) }
        let ttlSeconds = request.ttlSeconds ?? Admin.Notify.defaultTTLSeconds
        guard (0...Admin.Notify.maxTTLSeconds).contains(ttlSeconds) else {
            throw AdminError.invalidParameter("ttlSeconds", "must be 0 to \(Admin.Notify.maxTTLSeconds) seconds, got \(ttlSeconds)")
        }
        let (delivered, effects) = registry.notify(appID, payload: request.payload)
        perform(effects)
        var queuedUntil: String?
        if delivered == 0, ttlSeconds > 0 {
            let now = Clock.now()
            do {
                let queued = try store.queueNotification(appID: appID, payload: JSONValue.object(request.payload).serializedString(),
                                                         at: now, expiresAt: now + UnixMilliseconds(ttlSeconds) * 1000,
                                                         byUID: context.peer.uid)
                queuedUntil = Clock.rfc3339(queued.expiresAt)
            } catch {
                throw adminError(for: error, while: "queueing a notification for \(appID)")
            }
        }
        events.emit(kind: EventKind.notification, appID: appID, data: ["payload": .object(request.payload), "delivered": .number(delivered),
                                                               "queuedUntil": queuedUntil.map(JSONValue.string) ?? .null])
        return Admin.Notify.Reply(delivered: delivered, queuedUntil: queuedUntil)
    }

    /// The administrator acting from inside this process (`InProcessDaemon`).
    var testContext: ConnectionContext {
        ConnectionContext(peer: PeerIdentity(pid: getpid(), uid: getuid(), gid: getgid(), executable: nil, userName: nil, groups: []),
                          mayAdminister: true)
    }

    func adminError(for error: StoreError, while what: String) -> VarlinkError {
        switch error {
        case .versionConflict(let expected, let current):
            return AdminError.versionConflict(expected: expected, current: current ?? "")
        case .unknownVersion(let version):
            return AdminError.unknownVersion(version)
        case .invalidField(let field, let reason):
            return AdminError.invalidParameter(field, reason)
        case .limitExceeded(let field, let limit):
            return AdminError.invalidParameter(field, "limit of \(limit) reached")
        default:
            logStorageFailure(what, error)
            return AdminError.storageFailure("\(what): \(error)")
        }
    }
}

/// How many of the store's known apps the policy in force (`policySHA256`) does not name,
/// counted over the first `counted` of them in the store's order (`StateStore.knownApps(from:)`).
struct KnownAppTally {
    var policySHA256 = ""
    var counted = 0
    var outsidePolicy = 0
}
