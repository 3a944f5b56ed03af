import JSONCore
import ProctorPolicy

/// What proctord tells the app about itself, from a `Register` or `Subscribe` reply: the
/// complete current state, never a difference.
struct AgentUpdate: Sendable, Equatable {
    enum Reason: String, Sendable { case current, policy, wipe, notification }

    var reason: Reason
    var state: AppState
    var policyVersion: String
    var config: [String: JSONValue]
    var dlp: JSONValue
    var compliance: JSONValue
    var directives: [WipeDirective]
    var managedApps: [AppID]
    var notification: [String: JSONValue]?

    /// A reply that does not have the contract's shape, naming the field.
    struct Malformed: Error, CustomStringConvertible {
        let field: String
        let expected: String
        var description: String { "proctord's reply has no valid \(field) (expected \(expected))" }
    }

    /// `knownManagedApps`: the set the client last received, for a `Subscribe` reply that
    /// leaves `managedApps` out because it has not changed.
    init(reply: [String: JSONValue], defaultReason: Reason = .current, knownManagedApps: [AppID]? = nil) throws(Malformed) {
        if let text = reply["reason"]?.stringValue {
            guard let reason = Reason(rawValue: text) else { throw Malformed(field: "reason", expected: "current, policy, wipe or notification") }
            self.reason = reason
        } else {
            reason = defaultReason
        }
        guard let stateText = reply["state"]?.stringValue, let state = AppState(rawValue: stateText) else {
            throw Malformed(field: "state", expected: "authorized, blocked or retired")
        }
        self.state = state
        guard let version = reply["policyVersion"]?.stringValue else { throw Malformed(field: "policyVersion", expected: "a string") }
        policyVersion = version
        guard let config = reply["config"]?.objectValue else { throw Malformed(field: "config", expected: "an object") }
        self.config = config
        guard let dlp = reply["dlp"], dlp.objectValue != nil else { throw Malformed(field: "dlp", expected: "an object") }
        self.dlp = dlp
        guard let compliance = reply["compliance"], compliance.objectValue != nil else {
            throw Malformed(field: "compliance", expected: "an object")
        }
        self.compliance = compliance
        guard let directives = reply["directives"]?.arrayValue else { throw Malformed(field: "directives", expected: "an array") }
        self.directives = try directives.map { value throws(Malformed) in
            guard let id = value["id"]?.stringValue else { throw Malformed(field: "directives[].id", expected: "a string") }
            return WipeDirective(id: id, issuedAt: value["issuedAt"]?.stringValue, cause: .administrator)
        }
        if let managed = reply["managedApps"]?.arrayValue {
            managedApps = try managed.map { value throws(Malformed) in
                guard let id = value.stringValue else { throw Malformed(field: "managedApps[]", expected: "a string") }
                return id
            }
        } else if let knownManagedApps {
            managedApps = knownManagedApps
        } else {
            throw Malformed(field: "managedApps", expected: "an array of app ids")
        }
        notification = reply["notification"]?.objectValue
    }

    /// The seconds the cached rules stay in force without proctord.
    var offlineGraceSeconds: Int {
        compliance["offlineGraceSeconds"]?.intValue ?? 86_400
    }

    /// Compiles the rules for `app` into a one-app policy (plus the managed apps it may
    /// exchange data with), so `DataGuard` decides with the daemon's own engine, locally.
    func compile(for app: AppID) throws(PolicyProblems) -> CompiledPolicy {
        var apps: [String: JSONValue] = [:]
        for other in managedApps where other != app { apps[other] = ["state": "authorized"] }
        apps[app] = ["state": .string(state.rawValue), "dlp": dlp, "compliance": compliance]
        let document: JSONValue = ["schema": 1, "version": .string(policyVersion.isEmpty ? "unversioned" : policyVersion),
                                   "apps": .object(apps)]
        return CompiledPolicy(try Policy.parse(document.serialized(), source: "proctord's rules for \(app)"))
    }
}
