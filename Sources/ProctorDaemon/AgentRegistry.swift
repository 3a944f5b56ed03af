import JSONCore
import ProctorPolicy
import ProctorProtocol
import ProctorStore
import Varlink

/// Where a subscriber's `Subscribe` replies go: the open call's reply handle in proctord.
protocol SubscriptionHandle: AnyObject {
    /// Whether replies still reach the client.
    var isConnected: Bool { get }
    /// Sends one `Subscribe` reply, encoded once for all the sessions that get the same.
    func send(_ update: VarlinkEncodedReply)
}

extension VarlinkReplyHandle: SubscriptionHandle {}

/// The daemon's state about apps, apart from its I/O: the policy in force, the open
/// sessions by app, the apps that may have pending wipes and the generation of the set of
/// managed apps. It takes events — a registration, a subscription, closed sessions, a new
/// policy, a wipe, a notification — and returns what must follow (`Effect`s: pushes to
/// subscribers, store writes, `Events` entries, log lines, a status refresh), which `Daemon`
/// carries out in order. Its only I/O is reading the state store (pending wipes, queued
/// notifications), so it runs
/// in process against a temporary store.
final class AgentRegistry {
    enum Effect {
        /// Send `update` to the session's subscription.
        case push(AgentSession, Agent.Subscribe.Reply)
        /// Record in the store that wipe directive `id` went out at `time` (the first
        /// delivery time is kept; the directive stays pending until acknowledged).
        case wipeDelivered(id: String, at: UnixMilliseconds)
        /// Remove from the store the queued notifications `ids` of `appID`, handed to a subscriber.
        case queuedNotificationsDelivered(appID: AppID, ids: [Int64])
        /// An `Admin.Events` entry.
        case event(kind: String, appID: AppID?, data: [String: JSONValue])
        /// The state store failed while doing `what`; nothing else was affected.
        case storageFailure(what: String, StoreError)
        /// The session's launch verdict is a violation whose `onViolation` is `wipe`: its
        /// user's data keys are to be destroyed, as the SDK wipes the files.
        case complianceWipe(AgentSession, Agent.LaunchVerdict)
        /// The number of sessions or the policy changed (systemd's STATUS= line).
        case statusChanged
        /// Sign the session's view anew (`refreshView(of:)`) after `delay`, unless another
        /// push comes first (each push asks again).
        case refreshViewLater(AgentSession, after: Duration)
    }

    let store: StateStore
    private(set) var active: ActivePolicy
    private(set) var sessionsByApp: [AppID: [String: AgentSession]] = [:]
    private(set) var sessionCount = 0
    /// Apps that may have wipe directives pending (a superset: an entry is dropped when a
    /// look-up finds none), so answering the others costs no query — a push reaches
    /// every subscriber.
    private var appsWithPendingWipes: Set<AppID>
    /// Counts changes of the set of managed apps, so each session is sent the set only anew.
    private var managedAppsGeneration = 0
    /// Signs the views sent (`Agent.SignedAppView`).
    private let viewSigner: ViewSigner

    init(active: ActivePolicy, store: StateStore, appsWithPendingWipes: Set<AppID>, viewSigner: ViewSigner) {
        self.active = active
        self.store = store
        self.appsWithPendingWipes = appsWithPendingWipes
        self.viewSigner = viewSigner
    }

    /// Subscribers of `appID` whose replies still reach them.
    func connectedSubscribers(of appID: AppID) -> [AgentSession] {
        sessionsByApp[appID]?.values.filter { $0.subscription?.isConnected == true } ?? []
    }

    // MARK: Events

    /// A session was registered: what `Register` answers (the set of managed apps always).
    func register(_ session: AgentSession) -> (Agent.Register.Reply, [Effect]) {
        sessionsByApp[session.appID, default: [:]][session.id] = session
        sessionCount += 1
        let view = AppView(of: session.appID, in: active.compiled)
        var effects: [Effect] = [.statusChanged]
        let snapshot = deliverSnapshot(to: session, view: view, effects: &effects)
        let managedApps = takeManagedAppsIfChanged(for: session) ?? active.managedAppIDs
        return (Agent.Register.Reply(session: session.id, snapshot: snapshot, managedApps: managedApps,
                                     view: signedView(of: snapshot, for: session, at: Clock.now())), effects)
    }

    /// The session subscribed through `handle`: its first reply is the current state, then
    /// come the notifications queued for the app while no session could receive them.
    func subscribe(_ session: AgentSession, through handle: any SubscriptionHandle) -> [Effect] {
        session.subscription = handle
        var effects: [Effect] = []
        let view = AppView(of: session.appID, in: active.compiled)
        update(session, reason: .current, view: view, effects: &effects)
        for payload in takeQueuedNotifications(of: session.appID, effects: &effects) {
            update(session, reason: .notification, view: view, notification: payload, effects: &effects)
            effects.append(.event(kind: EventKind.notification, appID: session.appID,
                                  data: ["payload": .object(payload), "delivered": 1, "fromQueue": true]))
        }
        return effects
    }

    /// A connection closed and its sessions with it.
    func close(_ sessions: some Collection<AgentSession>) -> [Effect] {
        guard !sessions.isEmpty else { return [] }
        for session in sessions {
            sessionsByApp[session.appID]?[session.id] = nil
            if sessionsByApp[session.appID]?.isEmpty == true { sessionsByApp[session.appID] = nil }
            sessionCount -= 1
        }
        return [.statusChanged]
    }

    /// Makes `policy` the one in force: every subscriber whose app's view or launch verdict
    /// changed is told (the verdict is decided again for each session, at the version it
    /// registered with, so a raised `minVersion` reaches running apps). A change of the set of managed apps concerns every app: its copies and shares towards
    /// the others are decided against that set (the SDK decides them locally).
    ///
    /// Runs on the event loop, so it compares the two sets by their digests (made with each
    /// policy, off the loop) instead of comparing 100 000 ids.
    func activate(_ policy: ActivePolicy) -> [Effect] {
        let managedAppsChanged = active.managedAppsDigest != policy.managedAppsDigest
        if managedAppsChanged { managedAppsGeneration += 1 }
        active = policy
        var effects: [Effect] = []
        let now = Clock.now()  // one instant for the whole push: sessions that see the same view share one signature
        for (appID, sessions) in sessionsByApp {
            let view = AppView(of: appID, in: policy.compiled)
            for session in sessions.values where session.subscription != nil {
                let verdict = launchVerdict(for: session)
                guard managedAppsChanged || session.lastView != view || session.lastLaunch != verdict else { continue }
                if let previous = session.lastLaunch, previous.allowed != verdict.allowed || previous.violation != verdict.violation {
                    effects.append(.event(kind: EventKind.compliance, appID: appID, data: [
                        "session": .string(session.id), "version": session.appVersion.map(JSONValue.string) ?? .null,
                        "launch": verdict.json,
                    ]))
                }
                update(session, reason: .policy, view: view, at: now, effects: &effects)
                if !verdict.allowed, verdict.violation == .wipe { effects.append(.complianceWipe(session, verdict)) }
            }
        }
        effects.append(.event(kind: EventKind.policy, appID: nil, data: ["version": .string(policy.version), "sha256": .string(policy.sha256)]))
        effects.append(.statusChanged)
        return effects
    }

    /// Nothing changed for the session, but its signed view is due to be renewed: a `refresh`
    /// reply, so the view the app caches for an offline launch stays recent.
    func refreshView(of session: AgentSession) -> [Effect] {
        guard sessionsByApp[session.appID]?[session.id] === session else { return [] }
        var effects: [Effect] = []
        update(session, reason: .refresh, view: AppView(of: session.appID, in: active.compiled), effects: &effects)
        return effects
    }

    /// How long a subscriber's signed view may age before it is signed anew: half the app's
    /// offline grace, at least a second and at most an hour — so an app is refused an offline
    /// launch at most that much before its grace, counted from its last contact, ends.
    static func viewRefreshDelay(offlineGraceSeconds: Int) -> Duration {
        .seconds(min(3600, max(1, offlineGraceSeconds / 2)))
    }

    /// A wipe of `appID` was recorded in the store: its subscribers get it now.
    func wipeIssued(for appID: AppID) -> (deliveredTo: Int, effects: [Effect]) {
        appsWithPendingWipes.insert(appID)
        return push(to: appID, reason: .wipe, notification: nil)
    }

    /// The administrator's `payload` for `appID`'s subscribers.
    func notify(_ appID: AppID, payload: [String: JSONValue]) -> (delivered: Int, effects: [Effect]) {
        push(to: appID, reason: .notification, notification: payload)
    }

    // MARK: Updates

    private func push(to appID: AppID, reason: Agent.UpdateReason, notification: [String: JSONValue]?)
        -> (Int, [Effect])
    {
        var effects: [Effect] = []
        let view = AppView(of: appID, in: active.compiled)
        let subscribers = connectedSubscribers(of: appID)
        let now = Clock.now()
        for session in subscribers {
            update(session, reason: reason, view: view, notification: notification, at: now, effects: &effects)
        }
        return (subscribers.count, effects)
    }

    /// A `Subscribe` reply carrying the app's complete current state; a subscription whose
    /// client is gone is dropped instead.
    private func update(_ session: AgentSession, reason: Agent.UpdateReason, view: AppView?,
                        notification: [String: JSONValue]? = nil, at now: UnixMilliseconds = Clock.now(),
                        effects: inout [Effect]) {
        guard let subscription = session.subscription else { return }
        guard subscription.isConnected else {
            session.subscription = nil
            return
        }
        let snapshot = deliverSnapshot(to: session, view: view, effects: &effects)
        let update = Agent.Subscribe.Reply(reason: reason, snapshot: snapshot, managedApps: takeManagedAppsIfChanged(for: session),
                                           notification: notification, view: signedView(of: snapshot, for: session, at: now))
        effects.append(.push(session, update))
        let grace = view?.compliance["offlineGraceSeconds"]?.intValue ?? BuiltinDefaults.offlineGraceSeconds
        effects.append(.refreshViewLater(session, after: Self.viewRefreshDelay(offlineGraceSeconds: grace)))
    }

    /// What `Register` and `Subscribe` tell an app about itself; an app that left the
    /// policy is told it is retired. The pending wipe directives handed over are to be
    /// marked delivered (`Effect.wipeDelivered`); the view and verdict sent are remembered
    /// on the session.
    private func deliverSnapshot(to session: AgentSession, view: AppView?, effects: inout [Effect]) -> Agent.AppSnapshot {
        let verdict = launchVerdict(for: session)
        session.lastView = view
        session.lastLaunch = verdict
        return Agent.AppSnapshot(state: view?.state ?? .retired, policyVersion: active.version, config: view?.config ?? [:],
                                 dlp: view?.dlp ?? [:], compliance: view?.compliance ?? [:], launch: verdict,
                                 directives: deliverPendingWipes(to: session.appID, effects: &effects))
    }

    /// `snapshot` signed for the session's app and user, issued `now`.
    private func signedView(of snapshot: Agent.AppSnapshot, for session: AgentSession, at now: UnixMilliseconds)
        -> Agent.SignedAppView {
        viewSigner.sign(Agent.AppViewPayload(appId: session.appID, uid: Int(session.peer.uid), issuedAt: Clock.rfc3339(now),
                                                    snapshot: snapshot, managedAppsSHA256: active.managedAppsDigest), now: now)
    }

    /// The policy in force's `launch` decision for the session's app at its version.
    func launchVerdict(for session: AgentSession) -> Agent.LaunchVerdict {
        Agent.LaunchVerdict(active.compiled.decide(session.launchRequest))
    }

    /// The set of managed apps if `session` has not been sent it since it last changed, and
    /// then counts it as sent. The set lets the SDK decide copies and shares towards other
    /// apps from its cache; it grows with the policy, so a session gets it only anew (a push
    /// to many sessions stays small).
    private func takeManagedAppsIfChanged(for session: AgentSession) -> [AppID]? {
        guard session.managedAppsGeneration != managedAppsGeneration else { return nil }
        session.managedAppsGeneration = managedAppsGeneration
        return active.managedAppIDs
    }

    /// The notifications queued for `appID`, to be removed from the queue
    /// (`Effect.queuedNotificationsDelivered`). A queued payload is JSON text the daemon wrote
    /// from an object; one that does not read as one is skipped (and removed).
    private func takeQueuedNotifications(of appID: AppID, effects: inout [Effect]) -> [[String: JSONValue]] {
        do {
            let queued = try store.queuedNotifications(appID: appID, now: Clock.now())
            if !queued.isEmpty { effects.append(.queuedNotificationsDelivered(appID: appID, ids: queued.map(\.id))) }
            return queued.compactMap { (try? JSONParser.parse($0.payload))?.objectValue }
        } catch {
            effects.append(.storageFailure(what: "taking the queued notifications of \(appID)", error))
            return []
        }
    }

    /// The app's pending wipe directives, each not yet delivered with its `wipeDelivered` effect.
    private func deliverPendingWipes(to appID: AppID, effects: inout [Effect]) -> [Agent.WipeDirective] {
        guard appsWithPendingWipes.contains(appID) else { return [] }
        do {
            let now = Clock.now()
            let pending = try store.pendingWipes(appID: appID)
            if pending.isEmpty { appsWithPendingWipes.remove(appID) }
            return pending.map { directive in
                if directive.deliveredAt == nil { effects.append(.wipeDelivered(id: directive.id, at: now)) }
                return Agent.WipeDirective(id: directive.id, issuedAt: Clock.rfc3339(directive.issuedAt))
            }
        } catch {
            effects.append(.storageFailure(what: "reading pending wipes of \(appID)", error))
            return []
        }
    }
}
