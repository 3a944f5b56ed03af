/// A policy compiled for deciding: every app's settings resolved (app → `defaults` →
/// `BuiltinDefaults`), each with the layer that supplied it, and every glob compiled
/// (identical lists once). A decision names its rule by layer, setting and the asking app's
/// id, rendered to the JSON path only when read (`Decision.rule`), so deciding touches no
/// per-app text.
///
/// `decide` costs one hash lookup for the app and, for actions between apps, one for the
/// other app, whatever the number of apps; it reads plain values from a dense record, builds
/// no strings and allocates nothing (a `file.export` resolves its path on the stack).
///
/// Semantics (docs/engine.md): an app is *managed* when the policy names it with state
/// `authorized`; an unknown, blocked or retired app, or a missing target, is unmanaged. An
/// app the policy does not name is denied everything (`builtin.unknownApp`); a blocked or
/// retired app is denied everything, `launch` included, by its state (`apps["x"].state`);
/// data moving within one app (target equal to the app) is always allowed
/// (`builtin.sameApp`).
public struct CompiledPolicy: Sendable {
    /// The longest path `file.export` accepts (Linux's `PATH_MAX`); longer ones are denied
    /// with `builtin.fileExport.pathTooLong`.
    public static let maxExportPathBytes = 4096

    let storage: CompiledPolicyStorage

    /// The policy this was compiled from.
    public var policy: Policy { storage.policy }

    /// Compiles `policy`; the cost is linear in the size of the policy.
    public init(_ policy: Policy) {
        let sorted = Self.sortedApps(policy.apps)
        let (records, tables) = Self.records(policy, sorted)
        storage = CompiledPolicyStorage(policy: policy, appIDs: sorted.map(\.id), records: records, tables: tables)
    }

    /// The decision for `request`, naming the rule that made it.
    public func decide(_ request: DecisionRequest) -> Decision { storage.decide(request) }

    /// The entry of `app` in the policy, whatever its state.
    public func appPolicy(_ app: AppID) -> AppPolicy? { policy.apps[app] }

    /// Whether `app` is named in the policy with state `authorized`.
    public func isManaged(_ app: AppID) -> Bool { storage.table.find(app)?.isManaged ?? false }

    /// The ids of every managed app, sorted; what an SDK needs besides its own effective rules
    /// to decide copies and shares towards other apps locally.
    public var managedAppIDs: [AppID] {
        let storage = storage
        return storage.table.positions.indices.filter { storage.records[storage.table.positions[$0]].state == .authorized }
            .map { storage.appIDs[$0] }
    }
}
