import JSONCore
import ProctorPolicy
import ProctorProtocol

/// What proctord tells the app about itself, from a `Register` or `Subscribe` reply: the
/// complete current state, never a difference.
struct AgentUpdate: Sendable, Equatable {
    typealias Reason = Agent.UpdateReason

    var reason: Reason
    var state: AppState
    var policyVersion: String
    var config: [String: JSONValue]
    var dlp: [String: JSONValue]
    var compliance: [String: JSONValue]
    /// proctord's `launch` decision for this app at its registered version, made again on
    /// every policy change.
    var launch: Decision
    var directives: [WipeDirective]
    var managedApps: [AppID]
    var notification: [String: JSONValue]?
    /// The view signed by proctord, for the offline cache; nil for a view read from it.
    var signedView: Agent.SignedAppView?

    private init(reason: Reason, snapshot: Agent.AppSnapshot, managedApps: [AppID], notification: [String: JSONValue]?,
                 signedView: Agent.SignedAppView?) {
        self.reason = reason
        state = snapshot.state
        policyVersion = snapshot.policyVersion
        config = snapshot.config
        dlp = snapshot.dlp
        compliance = snapshot.compliance
        launch = Decision(allowed: snapshot.launch.allowed, rule: snapshot.launch.rule, reason: snapshot.launch.reason,
                          violation: snapshot.launch.violation)
        directives = snapshot.directives.map { WipeDirective(id: $0.id, issuedAt: $0.issuedAt, cause: .administrator) }
        self.managedApps = managedApps
        self.notification = notification
        self.signedView = signedView
    }

    /// The state at registration.
    init(_ reply: Agent.Register.Reply) {
        self.init(reason: .current, snapshot: reply.snapshot, managedApps: reply.managedApps, notification: nil, signedView: reply.view)
    }

    /// The state a verified cached view records (`OfflineViewCache`), for a launch without proctord.
    init(offline payload: Agent.AppViewPayload, managedApps: [AppID]) {
        self.init(reason: .current, snapshot: payload.snapshot, managedApps: managedApps, notification: nil, signedView: nil)
    }

    /// A `Subscribe` reply; `knownManagedApps` is the set the client last received, for a
    /// reply that leaves `managedApps` out because it has not changed.
    init(_ reply: Agent.Subscribe.Reply, knownManagedApps: [AppID]) {
        self.init(reason: reply.reason, snapshot: reply.snapshot, managedApps: reply.managedApps ?? knownManagedApps,
                  notification: reply.notification, signedView: reply.view)
    }

    /// The seconds the cached rules stay in force without proctord.
    var offlineGraceSeconds: Int {
        compliance["offlineGraceSeconds"]?.intValue ?? 86_400
    }

    /// The seconds without proctord after which the app wipes its managed data; nil for never.
    var offlineWipeSeconds: Int? {
        compliance["offlineWipeSeconds"]?.intValue
    }

    /// Compiles the rules for `app` into a one-app policy (plus the managed apps it may
    /// exchange data with), so `DataGuard` decides with the daemon's own engine, locally.
    func compile(for app: AppID) throws(PolicyProblems) -> CompiledPolicy {
        var apps: [String: JSONValue] = [:]
        for other in managedApps where other != app { apps[other] = ["state": "authorized"] }
        apps[app] = ["state": .string(state.rawValue), "dlp": .object(dlp), "compliance": .object(compliance)]
        let document: JSONValue = ["schema": 1, "version": .string(policyVersion.isEmpty ? "unversioned" : policyVersion),
                                   "apps": .object(apps)]
        return CompiledPolicy(try Policy.parse(document.serialized(), source: "proctord's rules for \(app)"))
    }
}
