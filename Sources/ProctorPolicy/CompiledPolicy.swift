/// A policy compiled for deciding: every app's settings resolved (app → `defaults` →
/// `BuiltinDefaults`), each with the layer that supplied it, and every glob compiled
/// (identical lists once). A decision names its rule by layer and setting, rendered to the
/// JSON path with the asking app's id only when read (`Decision.rule`,
/// `EngineDecision.rule(askingApp:)`), so deciding touches no per-app text.
///
/// `decide` costs one hash lookup for the app and, for actions between apps, one for the
/// other app, whatever the number of apps; it reads plain values from the app's table slot, builds
/// no strings and allocates nothing (a `file.export` resolves its path on the stack).
///
/// The parsed `Policy` is not kept: one app's entry is rebuilt from the compiled form on
/// demand (`appPolicy`, microseconds), the whole policy only by `policy` (linear in its size).
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

    @usableFromInline let storage: CompiledPolicyStorage

    /// Compiles `policy`; the cost is linear in the size of the policy.
    public init(_ policy: Policy) {
        let sorted = Self.sortedApps(policy.apps)
        let (records, entries, tables) = Self.records(policy, sorted)
        storage = CompiledPolicyStorage(version: policy.version, defaults: policy.defaults, appIDs: sorted.map(\.id),
                                        records: records, entries: entries, tables: tables)
    }

    /// The decision for `request`, naming the rule that made it.
    public func decide(_ request: DecisionRequest) -> Decision {
        Decision(engineDecision(for: request), askingApp: request.app)
    }

    /// `decide(_:)` as the engine makes it, for a caller that keeps the request (or at least its
    /// app id) to render the rule with (`EngineDecision`): no reference counting of the id.
    public func engineDecision(for request: DecisionRequest) -> EngineDecision {
        Self.withUTF8(of: request.target) { target in
            storage.decide(entry: storage.table.find(request.app), request.action, target: target, size: request.size,
                           appVersion: request.appVersion)
        }
    }

    /// Runs `body` on the UTF-8 bytes of `text` (nil for nil), as the engine reads a target.
    /// Read in place through a span borrowed from `text`: `AppTable.withBytes`, which may fall
    /// back to a copy, made `decide(_:)` keep the target retained across the decision for that
    /// fallback, an atomic increment and decrement (the span's getter costs ≈ 30 instructions,
    /// more than `withBytes` for the asking app, which is not retained around its lookup).
    public static func withUTF8<Result>(of text: String?, _ body: (UnsafeBufferPointer<UInt8>?) -> Result) -> Result {
        guard let text else { return body(nil) }
        return text.utf8.span.withUnsafeBufferPointer { body($0) }
    }

    /// Where an app stands in one compiled policy (its slot in the app table, or that the
    /// policy does not name it), kept by a caller that decides for the same app again and
    /// again (proctord's session) so that `engineDecision(app:remembering:…)` skips the app's hash
    /// lookup. It holds no reference to the policy: only the policy's generation, unique
    /// among the policies the process compiled, so a place from another policy is never used.
    public struct AppPlace: Sendable {
        fileprivate let generation: UInt64
        fileprivate let entry: AppTable.Entry?
    }

    /// `engineDecision(for:)` for a request given by its parts (`DecisionRequest`'s members),
    /// which the caller keeps, through `place`: where `app` stood in the policy of an earlier
    /// call (nil at first). Used when it is this policy's, else looked up and left in `place`.
    /// `place` must only ever have been given calls for this same `app`. The target is given
    /// as its UTF-8 bytes (`withUTF8(of:_:)`): proctord's direct `Decide` builds no request and
    /// makes no `String` of its target.
    public func engineDecision(app: AppID, remembering place: inout AppPlace?, _ action: Action,
                               target: UnsafeBufferPointer<UInt8>?, size: Int?, appVersion: SemanticVersion?) -> EngineDecision {
        storage.decide(app: app, remembering: &place, action, target: target, size: size, appVersion: appVersion)
    }

    /// This policy, not retained: for a caller that decides through a policy it holds where
    /// nothing a decision runs can replace it (proctord's loop), so that a call costs no
    /// retain and release of the policy, two atomic operations. Valid only while the policy
    /// is held elsewhere. Inlined, so that the policy is not retained to make it either.
    @inlinable
    public var unretained: Unretained { Unretained(storage: Unmanaged.passUnretained(storage)) }

    /// A policy held elsewhere (`unretained`).
    public struct Unretained {
        @usableFromInline let storage: Unmanaged<CompiledPolicyStorage>

        @usableFromInline
        init(storage: Unmanaged<CompiledPolicyStorage>) { self.storage = storage }

        /// `CompiledPolicy.engineDecision(app:remembering:…)`.
        public func engineDecision(app: AppID, remembering place: inout AppPlace?, _ action: Action,
                                   target: UnsafeBufferPointer<UInt8>?, size: Int?, appVersion: SemanticVersion?) -> EngineDecision {
            storage._withUnsafeGuaranteedRef {
                $0.decide(app: app, remembering: &place, action, target: target, size: size, appVersion: appVersion)
            }
        }
    }

    /// The policy's `version`.
    public var version: String { storage.version }

    /// The number of apps the policy names, whatever their state.
    public var appCount: Int { storage.table.positions.count }

    /// The entry of `app` in the policy, whatever its state, rebuilt from the compiled form.
    public func appPolicy(_ app: AppID) -> AppPolicy? {
        guard let entry = storage.table.find(app) else { return nil }
        return storage.appPolicy(at: entry.position)
    }

    /// The state of `app` in the policy, nil when the policy does not name it: what
    /// `appPolicy(app)?.state` says, from the table alone.
    public func state(of app: AppID) -> AppState? { storage.table.find(app)?.state }

    /// Whether `app` is named in the policy with state `authorized`.
    public func isManaged(_ app: AppID) -> Bool { storage.table.find(app)?.isManaged ?? false }

    /// The ids of every app the policy names, sorted.
    public var appIDs: [AppID] {
        let table = storage.table
        return table.positions.map { table.id(at: $0) }
    }

    /// The ids of every managed app, sorted; what an SDK needs besides its own effective rules
    /// to decide copies and shares towards other apps locally.
    public var managedAppIDs: [AppID] {
        let storage = storage
        return storage.table.positions.filter { storage.table.state(at: $0) == .authorized }.map { storage.table.id(at: $0) }
    }

    /// The policy this was compiled from, rebuilt: equal to it, and with the same canonical
    /// form. Linear in the size of the policy (run it off the event loop for a large one).
    public var policy: Policy {
        var apps: [AppID: AppPolicy] = Dictionary(minimumCapacity: appCount)
        for position in storage.table.positions {
            apps[storage.table.id(at: position)] = storage.appPolicy(at: position)
        }
        return Policy(version: version, defaults: storage.defaults, apps: apps)
    }

    /// Whether this was compiled from a policy equal to `other` byte for byte (`Policy`'s `==`,
    /// and the same bytes in every string: `PolicyExactEquality.swift`), without rebuilding
    /// this one: stops at the first app that differs.
    public func isCompiled(from other: Policy) -> Bool {
        guard sameBytes(other.version, version), other.defaults == storage.defaults,
              other.defaults.hasSameBytes(as: storage.defaults), other.apps.count == appCount else { return false }
        for (id, app) in other.apps {
            guard let entry = storage.table.find(id) else { return false }
            let compiled = storage.appPolicy(at: entry.position)
            guard compiled == app, compiled.hasSameBytes(as: app) else { return false }
        }
        return true
    }
}

extension CompiledPolicyStorage {
    /// `CompiledPolicy.engineDecision(app:remembering:…)`.
    func decide(app: AppID, remembering place: inout CompiledPolicy.AppPlace?, _ action: Action,
                target: UnsafeBufferPointer<UInt8>?, size: Int?, appVersion: SemanticVersion?) -> EngineDecision {
        let entry: AppTable.Entry?
        if let place, place.generation == generation {
            entry = place.entry
        } else {
            entry = table.find(app)
            place = CompiledPolicy.AppPlace(generation: generation, entry: entry)
        }
        return decide(entry: entry, action, target: target, size: size, appVersion: appVersion)
    }
}
