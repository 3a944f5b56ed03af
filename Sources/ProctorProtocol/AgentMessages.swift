import JSONCore
public import ProctorPolicy

// `io.proctor.Agent`: the methods managed apps call (through ProctorKit), their parameters
// and replies. The message types are generated from `Interfaces/io.proctor.Agent.varlink`
// (with `Interfaces/SwiftMapping.txt`) at build time; to add a field, add it there. What
// is logic stays here: the rules a message is checked against, conversions, and coding
// that is more than the fields' (`AgentDecideCoding.swift`).

extension Agent {
    /// The events `ReportEvent` accepts: the lifecycle events, `dataActionDenied` and
    /// `fileExportEnforcement`.
    public static let reportableEvents: Set<String> = [
        "didFinishLaunching", "didBecomeActive", "willResignActive", "didEnterBackground",
        "willEnterForeground", "didReceiveMemoryWarning", "userDidChange", "didReceiveRemoteNotification",
        "managedConfigurationDidChange", "didReceiveReload", "willTerminate", "dataActionDenied",
        fileExportEnforcementEvent,
    ]

    /// The `ReportEvent` by which the SDK says who enforces the export rule in its process
    /// (`detail` {"enforcement": "kernel"|"advisory", "landlockABI", "reason", …}).
    public static let fileExportEnforcementEvent = "fileExportEnforcement"

    /// What a `SignedAppView` says: the snapshot for one app and one user at one time, its
    /// `directives` always empty (they are carried out when received, never from a cache).
    /// `managedAppsSHA256` binds the set of managed apps, which is sent apart because it can be long.
    /// Not a type of the interface: the interface describes it in `SignedAppView`'s comment.
    public struct AppViewPayload: ProtocolMessage {
        public var appId: String
        /// The uid of the registered process: the user whose cache may hold the view.
        public var uid: Int
        /// RFC 3339: when proctord signed the view.
        public var issuedAt: String
        public var snapshot: AppSnapshot
        /// `AppViewPayload.digest(managedApps:)` of the set in force.
        public var managedAppsSHA256: String

        public init(appId: String, uid: Int, issuedAt: String, snapshot: AppSnapshot, managedAppsSHA256: String) {
            self.appId = appId
            self.uid = uid
            self.issuedAt = issuedAt
            self.snapshot = snapshot
            self.snapshot.directives = []
            self.managedAppsSHA256 = managedAppsSHA256
        }

        // The snapshot's fields are the payload's own, beside these.
        private enum CodingKeys: CodingKey { case appId, uid, issuedAt, managedAppsSHA256 }

        public init(from decoder: any Decoder) throws {
            let fields = try decoder.container(keyedBy: CodingKeys.self)
            appId = try fields.decode(String.self, forKey: .appId)
            uid = try fields.decode(Int.self, forKey: .uid)
            issuedAt = try fields.decode(String.self, forKey: .issuedAt)
            snapshot = try AppSnapshot(from: decoder)
            snapshot.directives = []
            managedAppsSHA256 = try fields.decode(String.self, forKey: .managedAppsSHA256)
        }

        public func encode(to encoder: any Encoder) throws {
            try snapshot.encode(to: encoder)
            var fields = encoder.container(keyedBy: CodingKeys.self)
            try fields.encode(appId, forKey: .appId)
            try fields.encode(uid, forKey: .uid)
            try fields.encode(issuedAt, forKey: .issuedAt)
            try fields.encode(managedAppsSHA256, forKey: .managedAppsSHA256)
        }

        public func check() throws(MalformedMessage) {
            try RFC3339.check(issuedAt, field: "issuedAt")
        }

        /// The SHA-256 (hex) of the canonical JSON array of `managedApps`, in the order sent.
        public static func digest(managedApps: [String]) -> String {
            SHA256.hexDigest(JSONValue.array(managedApps.map(JSONValue.string)).serialized())
        }
    }
}

extension Agent.LaunchVerdict {
    public init(_ decision: Decision) {
        self.init(allowed: decision.allowed, rule: decision.rule, reason: decision.reason, violation: decision.violation)
    }
}

extension Agent.ReportEvent.Request {
    /// `event` is one of `Agent.reportableEvents`; `occurredAt` an RFC 3339 time.
    public func check() throws(MalformedMessage) {
        guard Agent.reportableEvents.contains(event) else { throw .notOneOf("event", event, Agent.reportableEvents.sorted()) }
        try RFC3339.check(occurredAt, field: "occurredAt")
    }
}

extension Agent.GetDataKey.Reply: CustomStringConvertible {
    /// Leaves the key out (key material), so a reply that ends up in a log line does not leak it.
    public var description: String { "GetDataKey.Reply(keyId: \(keyId), generation: \(generation))" }
}
