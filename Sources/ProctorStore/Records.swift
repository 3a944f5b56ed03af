/// Milliseconds since the Unix epoch (UTC). Every time the store records or returns uses
/// this unit; the daemon formats them for JSON.
public typealias UnixMilliseconds = Int64

/// How an applied-bundle history entry came to be.
public enum BundleChangeKind: String, Sendable, Equatable {
    /// A bundle pushed by `ApplyPolicy`.
    case apply
    /// An earlier version made current again by `RollbackPolicy`.
    case rollback
}

/// One entry of the applied-policy history. The newest entry is the bundle in force.
public struct BundleRecord: Sendable, Equatable {
    /// Increases with every entry; never reused, even after trimming.
    public let id: Int64
    /// The policy's own `version` string.
    public let version: String
    /// Lowercase hex SHA-256 of `canonicalJSON`, computed by the store.
    public let sha256: String
    /// The policy as canonical JSON text, exactly as applied.
    public let canonicalJSON: String
    public let appliedAt: UnixMilliseconds
    /// The peer uid of the administrator who applied or rolled back.
    public let appliedByUID: UInt32
    public let kind: BundleChangeKind
}

/// Where a wipe directive is in its life.
public enum WipeState: String, Sendable, Equatable {
    /// Recorded, not yet handed to any session of the app.
    case issued
    /// Handed to a session at least once, not yet acknowledged as done.
    case delivered
    /// The app acknowledged that it wiped its data.
    case completed
}

/// An administrator's notification kept for an app that had no session to receive it.
public struct QueuedNotification: Sendable, Equatable {
    public let id: Int64
    public let appID: String
    /// The payload, as the JSON text the administrator sent.
    public let payload: String
    public let queuedAt: UnixMilliseconds
    /// After this it is dropped undelivered.
    public let expiresAt: UnixMilliseconds
    public let queuedByUID: UInt32
}

/// An order to an app to wipe its managed data, kept until the app acknowledges it.
public struct WipeDirective: Sendable, Equatable {
    /// A random UUID string, unique per directive.
    public let id: String
    public let appID: String
    public let issuedAt: UnixMilliseconds
    public let issuedByUID: UInt32
    /// When it was first handed to a session, if it has been.
    public let deliveredAt: UnixMilliseconds?
    /// When the app acknowledged it, if it has.
    public let completedAt: UnixMilliseconds?

    public var state: WipeState {
        if completedAt != nil { return .completed }
        return deliveredAt != nil ? .delivered : .issued
    }
}

/// The last `Register` of an app.
public struct RegistrationRecord: Sendable, Equatable {
    public let at: UnixMilliseconds
    /// The version the app claimed, if it sent one.
    public let appVersion: String?
    public let pid: Int32
    public let uid: UInt32
}

/// The last lifecycle event an app reported.
public struct LifecycleRecord: Sendable, Equatable {
    public let event: String
    public let at: UnixMilliseconds
}

/// Severity of an app's keyed feedback.
public enum FeedbackSeverity: String, Sendable, Equatable, ClientWord {
    case info
    case error

    public static let field = "severity"
}

/// The latest feedback an app reported under one key.
public struct FeedbackRecord: Sendable, Equatable {
    public let key: String
    public let severity: FeedbackSeverity
    public let message: String
    public let data: String?
    public let at: UnixMilliseconds
}

/// What an app said it did with a policy version it received.
public enum PolicyAcknowledgementStatus: String, Sendable, Equatable, ClientWord {
    case applied
    case error
    case unsupported

    public static let field = "status"
}

/// An app's acknowledgement of one policy version (the latest one per version is kept).
public struct PolicyAcknowledgement: Sendable, Equatable {
    public let policyVersion: String
    public let status: PolicyAcknowledgementStatus
    public let at: UnixMilliseconds
}

/// Everything the store knows about one app, for `GetApp` and `proctorctl app ID`.
public struct AppInventory: Sendable, Equatable {
    public let appID: String
    public let registration: RegistrationRecord?
    public let lastEvent: LifecycleRecord?
    /// Sorted by key.
    public let feedback: [FeedbackRecord]
    /// Newest first.
    public let acknowledgements: [PolicyAcknowledgement]
    /// Newest first, pending and done.
    public let wipes: [WipeDirective]
}

/// Reported by `StateStore.open` when it found a damaged database and moved it aside.
/// The daemon logs this at error priority; the files are kept for inspection, without the
/// wrapped data keys that were in them.
public struct CorruptDatabaseRecovery: Sendable, Equatable {
    /// What SQLite said about the damaged file.
    public let reason: String
    /// Where `state.db` now lives (its `-wal`/`-shm`, if any, sit beside it with those suffixes).
    public let movedTo: String
    /// How many runs of hex digits that could hold (part of) a wrapped data key were
    /// overwritten in those files before they were moved (`WrappedKeyErasure`).
    public let erasedHexRuns: Int
}
