import Foundation
import JSONCore
import ProctorCrypto
import ProctorPolicy
import ProctorProtocol
import ProctorStore
import Testing
import TestSupport
import Varlink
@testable import ProctorDaemon

/// The daemon's app-side state machine, fed events in process against a real (temporary)
/// SQLite store: what each event pushes, and to whom.
@Suite struct AgentRegistryTests {
    /// A subscriber's end of a `Subscribe` call: the registry names it in its effects but
    /// never sends on it (`Daemon` carries out the pushes).
    final class IdleSubscription: SubscriptionHandle {
        var isConnected = true
        func send(_ update: VarlinkEncodedReply) {}
    }

    static func policy(version: String, apps: String) throws -> ActivePolicy {
        let text = #"{"schema": 1, "version": "\#(version)", "apps": {\#(apps)}}"#
        return ActivePolicy(directory: nil, bundle: CanonicalPolicy(try Policy.parse(Array(text.utf8), source: nil)), bundleVersion: version,
                            loadedAt: 0)
    }

    static let notesAndMail = #""com.example.notes": {"config": {"syncDays": 14}}, "com.example.mail": {}"#

    let directory: TemporaryDirectory
    let store: StateStore
    let viewSigner: ViewSigner

    init() throws {
        directory = try TemporaryDirectory(prefix: "proctor-registry")
        store = try StateStore.open(directory: directory.path, now: 0)
        viewSigner = ViewSigner(keyPair: try SigningKeyPair.generate())
    }

    func session(_ appID: AppID, _ id: String, version: String? = nil, uid: uid_t = 0) -> AgentSession {
        AgentSession(id: id, appID: appID, peer: PeerIdentity(pid: 1, uid: uid, gid: 0, executable: nil, userName: nil, groups: []),
                     appVersion: version, registeredAt: 0)
    }

    func notesAndMailRegistry() throws -> AgentRegistry {
        AgentRegistry(active: try Self.policy(version: "1", apps: Self.notesAndMail), store: store, appsWithPendingWipes: [],
                      viewSigner: viewSigner)
    }

    /// The payload of `view` once its signature verified with the registry's key.
    func verifiedPayload(_ view: Agent.SignedAppView) throws -> Agent.AppViewPayload {
        let signature = try #require(Base64.decode(view.signature))
        try viewSigner.keyPair.publicKey.verify(signature: signature, of: Array(view.payload.utf8))
        return try Agent.AppViewPayload(try #require(try JSONParser.parse(view.payload).objectValue))
    }

    @Test func aPushSignsTheViewItsSessionsShareOnce() throws {
        let registry = try notesAndMailRegistry()
        let subscriptions = (0..<3).map { _ in IdleSubscription() }
        let sessions = [session("com.example.notes", "a", uid: 1000), session("com.example.notes", "b", uid: 1000),
                        session("com.example.notes", "c", uid: 1001)]
        for (session, subscription) in zip(sessions, subscriptions) {
            _ = registry.register(session)
            _ = registry.subscribe(session, through: subscription)
        }
        let changed = #""com.example.notes": {"config": {"syncDays": 7}}, "com.example.mail": {}"#
        let views = registry.activate(try Self.policy(version: "2", apps: changed)).compactMap { effect in
            if case .push(let session, let update) = effect { (session.id, update.view) } else { nil }
        }.sorted { $0.0 < $1.0 }
        try #require(views.map(\.0) == ["a", "b", "c"])
        // One user's two sessions get the same signed view; another user's is signed for them.
        #expect(views[0].1 == views[1].1 && views[1].1 != views[2].1)
        #expect(try verifiedPayload(views[1].1).uid == 1000 && verifiedPayload(views[2].1).uid == 1001)
    }

    @Test func aSignedViewIsReusedOnlyWhileRecentAndTheSame() throws {
        let payload = Agent.AppViewPayload(
            appId: "a", uid: 1, issuedAt: "2026-11-30T12:00:00Z",
            snapshot: Agent.AppSnapshot(state: .authorized, policyVersion: "1", config: [:], dlp: [:], compliance: [:],
                                        launch: Agent.LaunchVerdict(allowed: true, rule: "r", reason: "ok", violation: nil),
                                        directives: []),
            managedAppsSHA256: "00")
        let first = viewSigner.sign(payload, now: 1_000_000)
        #expect(try verifiedPayload(first).issuedAt == RFC3339.string(milliseconds: 1_000_000))
        #expect(viewSigner.sign(payload, now: 1_000_999) == first)
        var other = payload
        other.uid = 2
        #expect(try verifiedPayload(viewSigner.sign(other, now: 1_001_000)).uid == 2)
        let later = viewSigner.sign(other, now: 1_001_000 + ViewSigner.reuseMilliseconds)
        #expect(try verifiedPayload(later).issuedAt == RFC3339.string(milliseconds: 1_002_000), "signed anew once a second old")
    }

    @Test func everyViewSentIsSignedForTheSessionsAppAndUser() throws {
        let registry = try notesAndMailRegistry()
        let notes = session("com.example.notes", "a", uid: 1000)
        let (reply, _) = registry.register(notes)
        let registered = try verifiedPayload(reply.view)
        #expect(registered.appId == "com.example.notes" && registered.uid == 1000)
        #expect(registered.snapshot == Agent.AppSnapshot(state: reply.snapshot.state, policyVersion: "1", config: ["syncDays": 14],
                                                         dlp: reply.snapshot.dlp, compliance: reply.snapshot.compliance,
                                                         launch: reply.snapshot.launch, directives: []))
        #expect(registered.managedAppsSHA256 == Agent.AppViewPayload.digest(managedApps: reply.managedApps))
        #expect(RFC3339.milliseconds(registered.issuedAt) != nil)

        let subscription = IdleSubscription()
        _ = registry.subscribe(notes, through: subscription)
        let effects = registry.activate(try Self.policy(version: "2", apps: #""com.example.notes": {"state": "blocked"}"#))
        let update = try #require(effects.compactMap { effect -> Agent.Subscribe.Reply? in
            if case .push(_, let update) = effect { update } else { nil }
        }.last)
        let pushed = try verifiedPayload(update.view)
        #expect(pushed.snapshot.state == .blocked && pushed.snapshot.policyVersion == "2")
        #expect(update.managedApps != nil && pushed.managedAppsSHA256 == Agent.AppViewPayload.digest(managedApps: update.managedApps ?? []))
        #expect(pushed.managedAppsSHA256 != registered.managedAppsSHA256)

        var tampered = reply.view
        tampered.payload = tampered.payload.replacingOccurrences(of: "1000", with: "1001")
        #expect(throws: CryptoError.self) { _ = try verifiedPayload(tampered) }
    }

    /// A registered session of `appID` with an open subscription.
    func subscribedSession(_ appID: AppID, _ id: String, in registry: AgentRegistry) -> (AgentSession, IdleSubscription) {
        let session = session(appID, id)
        let subscription = IdleSubscription()
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

    /// The delays of the `refreshViewLater` effects among `effects`.
    func refreshDelays(_ effects: [AgentRegistry.Effect]) -> [Duration] {
        effects.compactMap { if case .refreshViewLater(_, let delay) = $0 { delay } else { nil } }
    }

    @Test func aSubscribersViewIsSignedAnewAtHalfItsGraceAtMostHourly() throws {
        let registry = try notesAndMailRegistry()
        let notes = session("com.example.notes", "notes")
        _ = registry.register(notes)
        #expect(refreshDelays(registry.subscribe(notes, through: IdleSubscription())) == [.seconds(3600)])
        let shortGrace = #""com.example.notes": {"compliance": {"offlineGraceSeconds": 60}}, "com.example.mail": {}"#
        #expect(refreshDelays(registry.activate(try Self.policy(version: "2", apps: shortGrace))) == [.seconds(30)])

        let effects = registry.refreshView(of: notes)
        let update = try #require(effects.compactMap { effect -> Agent.Subscribe.Reply? in
            if case .push(_, let update) = effect { update } else { nil }
        }.first)
        #expect(update.reason == .refresh && update.managedApps == nil)
        #expect(try verifiedPayload(update.view).snapshot.policyVersion == "2")
        #expect(refreshDelays(effects) == [.seconds(30)])

        _ = registry.close([notes])
        #expect(registry.refreshView(of: notes).isEmpty, "a closed session is not refreshed")
        #expect(AgentRegistry.viewRefreshDelay(offlineGraceSeconds: 0) == .seconds(1))
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
        let notesSubscription = IdleSubscription(), mailSubscription = IdleSubscription()
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

    /// A view is the bytes its app is sent: a config value, a config member's name or a path
    /// respelt in another Unicode form (equal `String`s, other bytes) changes it, so the
    /// subscriber is told (a reload takes such an edit as a change since `PolicyExactEquality`).
    @Test func aViewWhoseOnlyChangeIsAStringsUnicodeFormIsPushed() throws {
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        let spellings = [
            { (word: String) in #""com.example.notes": {"config": {"folder": "\#(word)"}}, "com.example.mail": {}"# },
            { (word: String) in #""com.example.notes": {"config": {"\#(word)": 1}}, "com.example.mail": {}"# },
            { (word: String) in #""com.example.notes": {"dlp": {"fileExport": {"deny": ["/srv/\#(word)/**"]}}}, "com.example.mail": {}"# },
        ]
        for (place, apps) in spellings.enumerated() {
            let registry = AgentRegistry(active: try Self.policy(version: "1", apps: apps(composed)), store: store,
                                         appsWithPendingWipes: [], viewSigner: viewSigner)
            let notes = session("com.example.notes", "notes"), mail = session("com.example.mail", "mail")
            _ = registry.register(notes)
            _ = registry.register(mail)
            _ = registry.subscribe(notes, through: IdleSubscription())
            _ = registry.subscribe(mail, through: IdleSubscription())
            let respelt = try Self.policy(version: "2", apps: apps(decomposed))
            #expect(pushes(registry.activate(respelt)) == ["notes policy"], "place \(place)")
        }
    }

    @Test func aRaisedMinimumIsDecidedAgainForEachRunningSessionAtItsVersion() throws {
        let registry = try notesAndMailRegistry()
        let old = session("com.example.notes", "old", version: "1.0.0"), new = session("com.example.notes", "new", version: "2.5.0")
        for session in [old, new] {
            #expect(registry.register(session).0.snapshot.launch.allowed)
            _ = registry.subscribe(session, through: IdleSubscription())
        }
        let raised = try Self.policy(version: "2", apps: #""com.example.notes": {"config": {"syncDays": 14}, "#
                                     + #""compliance": {"minVersion": "2.0.0", "onViolation": "wipe"}}, "com.example.mail": {}"#)
        let effects = registry.activate(raised)
        #expect(Set(pushes(effects)) == ["old policy", "new policy"])
        let verdicts = Dictionary(uniqueKeysWithValues: effects.compactMap { effect -> (String, Agent.LaunchVerdict)? in
            guard case .push(let session, let update) = effect else { return nil }
            return (session.id, update.snapshot.launch)
        })
        let oldVerdict = try #require(verdicts["old"])
        #expect(!oldVerdict.allowed && oldVerdict.violation == .wipe && oldVerdict.rule.hasSuffix(".compliance.minVersion"))
        #expect(verdicts["new"]?.allowed == true && verdicts["new"]?.violation == nil)
        // The administrator hears of the session whose compliance changed, and only of it.
        let complianceEvents = effects.compactMap { effect -> JSONValue? in
            guard case .event(kind: "compliance", _, let data) = effect else { return nil }
            return data["session"]
        }
        #expect(complianceEvents == ["old"])
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
