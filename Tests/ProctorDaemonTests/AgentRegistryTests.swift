import JSONCore
import ProctorPolicy
import ProctorProtocol
import ProctorStore
import Testing
import TestSupport
@testable import ProctorDaemon

/// The daemon's app-side state machine, fed events in process against a real (temporary)
/// SQLite store: what each event pushes, and to whom.
@Suite struct AgentRegistryTests {
    /// A subscriber's end of a `Subscribe` call that records what it was sent.
    final class RecordingSubscription: SubscriptionHandle {
        var isConnected = true
        var received: [Agent.Subscribe.Reply] = []
        func send(_ update: Agent.Subscribe.Reply) { received.append(update) }
    }

    static func policy(version: String, apps: String) throws -> ActivePolicy {
        let text = #"{"schema": 1, "version": "\#(version)", "apps": {\#(apps)}}"#
        return ActivePolicy(directory: nil, bundle: try Policy.parse(Array(text.utf8), source: nil), bundleVersion: version,
                            loadedAt: 0)
    }

    static let notesAndMail = #""com.example.notes": {"config": {"syncDays": 14}}, "com.example.mail": {}"#

    let directory: TemporaryDirectory
    let store: StateStore

    init() throws {
        directory = try TemporaryDirectory(prefix: "proctor-registry")
        store = try StateStore.open(directory: directory.path, now: 0)
    }

    func session(_ appID: AppID, _ id: String) -> AgentSession {
        AgentSession(id: id, appID: appID, peer: PeerIdentity(pid: 1, uid: 0, gid: 0, executable: nil, userName: nil, groups: []),
                     appVersion: nil, registeredAt: 0)
    }

    func notesAndMailRegistry() throws -> AgentRegistry {
        AgentRegistry(active: try Self.policy(version: "1", apps: Self.notesAndMail), store: store, appsWithPendingWipes: [])
    }

    /// A registered session of `appID` with an open subscription.
    func subscribedSession(_ appID: AppID, _ id: String, in registry: AgentRegistry) -> (AgentSession, RecordingSubscription) {
        let session = session(appID, id)
        let subscription = RecordingSubscription()
        _ = registry.register(session)
        _ = registry.subscribe(session, through: subscription)
        return (session, subscription)
    }

    /// The pushes among `effects`, as (session id, reason, whether it carried managedApps).
    func pushes(_ effects: [AgentRegistry.Effect]) -> [String] {
        effects.compactMap { effect in
            guard case .push(let session, let update) = effect else { return nil }
            return "\(session.id) \(update.reason.rawValue)\(update.managedApps == nil ? "" : " +managedApps")"
        }
    }

    @Test func registrationAnswersTheViewAndAlwaysTheSetOfManagedApps() throws {
        let registry = try notesAndMailRegistry()
        let (reply, effects) = registry.register(session("com.example.notes", "a"))
        #expect(reply.session == "a")
        #expect(reply.snapshot.state == .authorized && reply.snapshot.config == ["syncDays": 14])
        #expect(reply.managedApps == ["com.example.mail", "com.example.notes"])
        #expect(pushes(effects).isEmpty)
        #expect(registry.sessionCount == 1)
        let unknown = registry.register(session("org.example.gone", "b")).0
        #expect(unknown.snapshot.state == .retired)
    }

    @Test func aPolicyChangeReachesOnlySubscribersWhoseViewChangedUnlessTheManagedSetChanged() throws {
        let registry = try notesAndMailRegistry()
        let notes = session("com.example.notes", "notes"), mail = session("com.example.mail", "mail")
        let notesSubscription = RecordingSubscription(), mailSubscription = RecordingSubscription()
        _ = registry.register(notes)
        _ = registry.register(mail)
        #expect(pushes(registry.subscribe(notes, through: notesSubscription)) == ["notes current"])
        #expect(pushes(registry.subscribe(mail, through: mailSubscription)) == ["mail current"])

        // Only mail's view changes: only mail hears of it; the managed set is the same.
        let mailChanged = try Self.policy(version: "2", apps: #""com.example.notes": {"config": {"syncDays": 14}}, "com.example.mail": {"config": {"x": 1}}"#)
        let effects = registry.activate(mailChanged)
        #expect(pushes(effects) == ["mail policy"])
        #expect(effects.contains { if case .event(kind: "policy", _, _) = $0 { true } else { false } })

        // A new managed app concerns everyone, and the set goes out once per session.
        let grown = try Self.policy(version: "3", apps: Self.notesAndMail + #", "com.example.chat": {}"#)
        #expect(Set(pushes(registry.activate(grown))) == ["notes policy +managedApps", "mail policy +managedApps"])
        let again = try Self.policy(version: "4", apps: Self.notesAndMail + #", "com.example.chat": {"config": {"y": 2}}"#)
        #expect(pushes(registry.activate(again)).isEmpty)
    }

    @Test func aWipeIsPushedMarkedDeliveredAndRepeatedUntilAcknowledged() throws {
        let registry = try notesAndMailRegistry()
        _ = subscribedSession("com.example.notes", "notes", in: registry)
        let directive = try store.issueWipe(appID: "com.example.notes", issuedAt: 1, byUID: 0)
        let (delivered, effects) = registry.wipeIssued(for: "com.example.notes")
        #expect(delivered == 1)
        guard let update = effects.lazy.compactMap({ if case .push(_, let update) = $0 { update } else { nil } }).first else {
            Issue.record("no push: \(effects)")
            return
        }
        #expect(update.reason == .wipe && update.snapshot.directives.map(\.id) == [directive.id])
        // The registry only says the directive went out; the store is written by whoever
        // carries out the effects.
        let marks = effects.compactMap { if case .wipeDelivered(let id, _) = $0 { id } else { nil } }
        #expect(marks == [directive.id])
        #expect(try store.wipes(appID: "com.example.notes").first?.state != .delivered)

        #expect(registry.register(session("com.example.notes", "later")).0.snapshot.directives.map(\.id) == [directive.id])
        _ = try store.acknowledgeWipe(id: directive.id, appID: "com.example.notes", at: 2)
        #expect(registry.register(session("com.example.notes", "after")).0.snapshot.directives.isEmpty)
    }

    @Test func aGoneSubscriberIsDroppedAndClosedSessionsLeave() throws {
        let registry = try notesAndMailRegistry()
        let (notes, subscription) = subscribedSession("com.example.notes", "notes", in: registry)
        subscription.isConnected = false
        #expect(registry.notify("com.example.notes", payload: ["command": "sync"]).delivered == 0)
        #expect(pushes(registry.activate(try Self.policy(version: "2", apps: #""com.example.notes": {}"#))).isEmpty)
        #expect(notes.subscription == nil)
        let effects = registry.close([notes])
        #expect(registry.sessionCount == 0 && registry.sessionsByApp.isEmpty)
        #expect(effects.contains { if case .statusChanged = $0 { true } else { false } })
    }
}
