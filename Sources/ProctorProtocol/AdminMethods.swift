public import JSONCore
public import ProctorPolicy

extension Admin {
    public enum Status: AdminMethod {
        public static let name = "Status"
        public typealias Request = NoFields

        public struct Reply: ProtocolMessage {
            public var version: String
            public var startedAt: String
            public var uptimeSeconds: Double
            public var policy: PolicyInfo
            public var lastReload: ReloadResult?
            public var counts: Counts
            public var fleet: FleetStatus?

            public init(version: String, startedAt: String, uptimeSeconds: Double, policy: PolicyInfo,
                        lastReload: ReloadResult?, counts: Counts, fleet: FleetStatus? = nil) {
                self.version = version
                self.startedAt = startedAt
                self.uptimeSeconds = uptimeSeconds
                self.policy = policy
                self.lastReload = lastReload
                self.counts = counts
                self.fleet = fleet
            }
        }
    }

    public enum ListApps: AdminMethod {
        public static let name = "ListApps"
        public typealias Request = NoFields

        public struct Reply: ProtocolMessage {
            public var apps: [AppSummary]

            public init(apps: [AppSummary]) { self.apps = apps }
        }
    }

    public enum GetApp: AdminMethod {
        public static let name = "GetApp"
        public typealias Request = AppRequest

        public struct Reply: ProtocolMessage {
            public var app: AppDetail

            public init(app: AppDetail) { self.app = app }
        }
    }

    /// The parameters of a method that names only an app (`GetApp`, `Wipe`).
    public struct AppRequest: ProtocolMessage {
        public var appId: String

        public init(appId: String) { self.appId = appId }
    }

    public enum GetPolicy: AdminMethod {
        public static let name = "GetPolicy"
        public typealias Request = NoFields

        public struct Reply: ProtocolMessage {
            /// The effective policy document, canonical.
            public var policy: [String: JSONValue]
            public var info: PolicyInfo

            public init(policy: [String: JSONValue], info: PolicyInfo) {
                self.policy = policy
                self.info = info
            }
        }
    }

    /// The parameters of `ValidatePolicy`, and of `ApplyPolicy` with `expectedVersion`.
    public struct PolicyRequest: ProtocolMessage {
        public var policy: [String: JSONValue]
        /// `ApplyPolicy` only: apply only if this is the version in force.
        public var expectedVersion: String?
        /// `ApplyPolicy` only: apply even when an earlier applied policy had this version
        /// with other content (`VersionReused`).
        public var force: Bool?

        public init(policy: [String: JSONValue], expectedVersion: String? = nil, force: Bool? = nil) {
            self.policy = policy
            self.expectedVersion = expectedVersion
            self.force = force
        }
    }

    public enum ValidatePolicy: AdminMethod {
        public static let name = "ValidatePolicy"
        public typealias Request = PolicyRequest

        public struct Reply: ProtocolMessage {
            public var valid: Bool
            public var problems: [Problem]

            public init(valid: Bool, problems: [Problem]) {
                self.valid = valid
                self.problems = problems
            }
        }
    }

    /// The reply of `ApplyPolicy` and `RollbackPolicy`: the policy now in force.
    public struct AppliedPolicy: ProtocolMessage {
        public var version: String
        public var sha256: String

        public init(version: String, sha256: String) {
            self.version = version
            self.sha256 = sha256
        }
    }

    public enum ApplyPolicy: AdminMethod {
        public static let name = "ApplyPolicy"
        public typealias Request = PolicyRequest
        public typealias Reply = AppliedPolicy
    }

    public enum ApplyBundle: AdminMethod {
        public static let name = "ApplyBundle"

        public struct Request: ProtocolMessage {
            /// The envelope's text, exactly as signed.
            public var bundle: String

            public init(bundle: String) { self.bundle = bundle }
        }

        public struct Reply: ProtocolMessage {
            public var version: String
            public var sha256: String
            public var serial: Int

            public init(version: String, sha256: String, serial: Int) {
                self.version = version
                self.sha256 = sha256
                self.serial = serial
            }
        }
    }

    public enum Reload: AdminMethod {
        public static let name = "Reload"
        public typealias Request = NoFields

        public struct Reply: ProtocolMessage {
            public var result: ReloadResult
            public var policy: PolicyInfo

            public init(result: ReloadResult, policy: PolicyInfo) {
                self.result = result
                self.policy = policy
            }
        }
    }

    public enum Decide: AdminMethod {
        public static let name = "Decide"

        public struct Request: ProtocolMessage {
            public var appId: String
            public var action: Action
            public var target: String?
            public var size: Int?
            /// Decide as if the app ran this version.
            public var appVersion: SemanticVersion?

            public init(appId: String, action: Action, target: String? = nil, size: Int? = nil,
                        appVersion: SemanticVersion? = nil) {
                self.appId = appId
                self.action = action
                self.target = target
                self.size = size
                self.appVersion = appVersion
            }
        }

        public struct Reply: ProtocolMessage {
            public var allowed: Bool
            public var rule: String
            public var reason: String
            /// The reasoning, step by step.
            public var explanation: [String]

            public init(allowed: Bool, rule: String, reason: String, explanation: [String]) {
                self.allowed = allowed
                self.rule = rule
                self.reason = reason
                self.explanation = explanation
            }
        }
    }

    public enum Wipe: AdminMethod {
        public static let name = "Wipe"
        public typealias Request = AppRequest

        public struct Reply: ProtocolMessage {
            public var directiveId: String
            /// The connected sessions it was delivered to now.
            public var deliveredTo: Int

            public init(directiveId: String, deliveredTo: Int) {
                self.directiveId = directiveId
                self.deliveredTo = deliveredTo
            }
        }
    }

    public enum Notify: AdminMethod {
        public static let name = "Notify"

        /// The longest a notification may wait for its app (30 days).
        public static let maxTTLSeconds = 30 * 86_400
        /// How long it waits when the request does not say (24 hours).
        public static let defaultTTLSeconds = 86_400

        public struct Request: ProtocolMessage {
            public var appId: String
            public var payload: [String: JSONValue]
            /// How long to keep it for the app's next registration when no session receives
            /// it now; nil: `defaultTTLSeconds`; 0: not kept.
            public var ttlSeconds: Int?

            public init(appId: String, payload: [String: JSONValue], ttlSeconds: Int? = nil) {
                self.appId = appId
                self.payload = payload
                self.ttlSeconds = ttlSeconds
            }
        }

        public struct Reply: ProtocolMessage {
            /// How many subscribed sessions received it.
            public var delivered: Int
            /// When nobody received it: until when it waits for the app (RFC 3339).
            public var queuedUntil: String?

            public init(delivered: Int, queuedUntil: String? = nil) {
                self.delivered = delivered
                self.queuedUntil = queuedUntil
            }
        }
    }

    public enum PolicyHistory: AdminMethod {
        public static let name = "PolicyHistory"
        public typealias Request = NoFields

        public struct Reply: ProtocolMessage {
            /// Newest first.
            public var entries: [HistoryEntry]

            public init(entries: [HistoryEntry]) { self.entries = entries }
        }
    }

    public enum RollbackPolicy: AdminMethod {
        public static let name = "RollbackPolicy"

        public struct Request: ProtocolMessage {
            public var version: String

            public init(version: String) { self.version = version }
        }

        public typealias Reply = AppliedPolicy
    }

    public enum Events: AdminMethod {
        public static let name = "Events"

        public struct Request: ProtocolMessage {
            public var filter: EventFilter?
            /// Replay the recorded events with a larger id first (EventHistory's `lastId`).
            public var after: Int?

            public init(filter: EventFilter?, after: Int? = nil) {
                self.filter = filter
                self.after = after
            }

            public func check() throws(MalformedMessage) {
                if let after, after < 0 { throw MalformedMessage(field: "after", reason: "must be 0 or more") }
            }
        }

        public struct Reply: ProtocolMessage {
            public var event: Event

            public init(event: Event) { self.event = event }
        }
    }

    public enum EventHistory: AdminMethod {
        public static let name = "EventHistory"
        /// The most events one reply carries, and the default `limit`.
        public static let maxLimit = 10_000

        public struct Request: ProtocolMessage {
            public var filter: EventFilter?
            /// RFC 3339; events that occurred at or after it.
            public var since: String?
            /// RFC 3339; events that occurred before it.
            public var until: String?
            /// The newest this many (1…`maxLimit`).
            public var limit: Int?

            public init(filter: EventFilter?, since: String? = nil, until: String? = nil, limit: Int? = nil) {
                self.filter = filter
                self.since = since
                self.until = until
                self.limit = limit
            }

            public func check() throws(MalformedMessage) {
                try RFC3339.check(since, field: "since")
                try RFC3339.check(until, field: "until")
                if let limit, !(1...maxLimit).contains(limit) { throw MalformedMessage(field: "limit", reason: "must be 1 to \(maxLimit)") }
            }
        }

        public struct Reply: ProtocolMessage {
            /// Oldest first.
            public var events: [Event]
            /// The newest recorded event's id, whatever the filter; 0 when none.
            public var lastId: Int
            /// More events matched than were sent.
            public var truncated: Bool

            public init(events: [Event], lastId: Int, truncated: Bool) {
                self.events = events
                self.lastId = lastId
                self.truncated = truncated
            }
        }
    }

    /// Every method of the interface, for checks against the interface file.
    public static let methods: [any ProtocolMethod.Type] = [
        Status.self, ListApps.self, GetApp.self, GetPolicy.self, ValidatePolicy.self, ApplyPolicy.self, ApplyBundle.self,
        Reload.self,
        Decide.self, Wipe.self, Notify.self, PolicyHistory.self, RollbackPolicy.self, Events.self, EventHistory.self,
    ]
}
