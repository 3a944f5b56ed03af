import JSONCore

/// A policy compiled for deciding: every app's settings resolved (app → `defaults` →
/// `BuiltinDefaults`) with the JSON path of the deciding setting worked out ahead, and every
/// glob compiled. `decide` then costs two hash lookups (the app and, for actions between
/// apps, the other app) whatever the number of apps, builds no strings and allocates nothing.
///
/// Semantics (DESIGN.md §4): an app is *managed* when the policy names it with state
/// `authorized`; an unknown, blocked or retired app, or a missing target, is unmanaged. An
/// app the policy does not name is denied everything (`builtin.unknownApp`); a blocked or
/// retired app is denied everything, `launch` included, by its state (`apps["x"].state`);
/// data moving within one app (target equal to the app) is always allowed
/// (`builtin.sameApp`).
public struct CompiledPolicy: Sendable {
    /// The longest path `file.export` accepts (Linux's `PATH_MAX`); longer ones are denied
    /// with `builtin.fileExport.pathTooLong`.
    public static let maxExportPathBytes = 4096

    /// The policy this was compiled from.
    public let policy: Policy
    private let apps: [AppID: CompiledApp]

    /// Compiles `policy`; the cost is linear in the size of the policy.
    public init(_ policy: Policy) {
        self.policy = policy
        let defaults = ResolvedSettings(policy.defaults, at: JSONPath([.key("defaults")]).description, over: .builtin)
        var apps: [AppID: CompiledApp] = Dictionary(minimumCapacity: policy.apps.count)
        for (id, app) in policy.apps {
            let path = JSONPath([.key("apps"), .key(id)]).description
            apps[id] = CompiledApp(id: id, state: app.state,
                                   settings: ResolvedSettings(app.settings, at: path, over: defaults),
                                   stateRule: path + ".state")
        }
        self.apps = apps
    }

    /// The decision for `request`, naming the rule that made it.
    public func decide(_ request: DecisionRequest) -> Decision {
        guard let app = apps[request.app] else { return Self.unknownApp }
        guard app.state == .authorized else { return app.stateDenial }
        switch request.action {
        case .launch:
            return app.decideLaunch(version: request.appVersion)
        case .clipboardCopy:
            return app.decideCopy(to: standing(of: request.target, toward: app), size: request.size)
        case .clipboardPaste:
            return app.decidePaste(from: standing(of: request.target, toward: app))
        case .shareSend:
            return app.decideShare(sending: true, other: standing(of: request.target, toward: app), otherID: request.target)
        case .shareReceive:
            return app.decideShare(sending: false, other: standing(of: request.target, toward: app), otherID: request.target)
        case .print:
            return app.decidePrint()
        case .screenCapture:
            return app.decideScreenCapture()
        case .fileExport:
            return app.decideExport(path: request.target)
        }
    }

    /// The entry of `app` in the policy, whatever its state.
    public func appPolicy(_ app: AppID) -> AppPolicy? { policy.apps[app] }

    /// Whether `app` is named in the policy with state `authorized`.
    public func isManaged(_ app: AppID) -> Bool { apps[app]?.isManaged ?? false }

    /// The ids of every managed app, sorted; what an SDK needs besides its own effective rules
    /// to decide copies and shares towards other apps locally.
    public var managedAppIDs: [AppID] {
        apps.values.filter(\.isManaged).map(\.id).sorted()
    }

    func compiledApp(_ app: AppID) -> CompiledApp? { apps[app] }

    private func standing(of target: String?, toward app: CompiledApp) -> TargetStanding {
        guard let target else { return .unmanaged }
        if target == app.id { return .sameApp }
        return apps[target]?.isManaged == true ? .managed : .unmanaged
    }

    private static let unknownApp = Decision(allowed: false, rule: BuiltinDefaults.Rule.unknownApp,
                                             reason: DecisionReason.unknownApp)
}
