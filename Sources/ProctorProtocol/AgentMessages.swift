public import JSONCore
public import ProctorPolicy

/// `io.proctor.Agent`: the methods managed apps call (through ProctorKit), their parameters
/// and replies. The contract is `Interfaces/io.proctor.Agent.varlink`; to add a field, add
/// it there and as a stored property to the one message type here that carries it (and to
/// its public init): its name is the field's (see `ProtocolMessage`).
/// A method of `io.proctor.Agent`; the SDK calls them.
public protocol AgentMethod: ProtocolMethod {}

extension AgentMethod {
    public static var interface: String { Agent.interface }
}

public enum Agent {
    public static let interface = "io.proctor.Agent"

    /// Why a `Subscribe` reply was sent (`UpdateReason`).
    public enum UpdateReason: String, Sendable, CaseIterable, Codable {
        case current, policy, wipe, notification, refresh
    }

    /// How a wipe ended on the app's side (`WipeOutcome`).
    public enum WipeOutcome: String, Sendable, CaseIterable, Codable {
        case completed, failed
    }

    /// How serious a feedback entry is (`FeedbackSeverity`).
    public enum FeedbackSeverity: String, Sendable, CaseIterable, Codable {
        case info, error
    }

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

    /// `LaunchVerdict`: the `launch` decision for a session's app at its registered version,
    /// made again on every policy change, so that compliance holds while the app runs.
    public struct LaunchVerdict: ProtocolMessage {
        public var allowed: Bool
        public var rule: String
        public var reason: String
        /// Set when the version fails `compliance.minVersion`: the policy's `onViolation`.
        public var violation: Violation?

        public init(allowed: Bool, rule: String, reason: String, violation: Violation?) {
            self.allowed = allowed
            self.rule = rule
            self.reason = reason
            self.violation = violation
        }

        public init(_ decision: Decision) {
            self.init(allowed: decision.allowed, rule: decision.rule, reason: decision.reason, violation: decision.violation)
        }
    }

    /// `WipeDirective`: an order to erase the app's managed data.
    public struct WipeDirective: ProtocolMessage {
        public var id: String
        public var issuedAt: String

        public init(id: String, issuedAt: String) {
            self.id = id
            self.issuedAt = issuedAt
        }
    }

    /// What `Register` and `Subscribe` tell an app about itself, sent as fields of their
    /// replies: its state, the policy version, its configuration and effective rules, the
    /// launch verdict for its version and its pending wipe directives.
    public struct AppSnapshot: ProtocolMessage {
        public var state: AppState
        public var policyVersion: String
        public var config: [String: JSONValue]
        public var dlp: [String: JSONValue]
        public var compliance: [String: JSONValue]
        public var launch: LaunchVerdict
        public var directives: [WipeDirective]

        public init(state: AppState, policyVersion: String, config: [String: JSONValue], dlp: [String: JSONValue],
                    compliance: [String: JSONValue], launch: LaunchVerdict, directives: [WipeDirective]) {
            self.state = state
            self.policyVersion = policyVersion
            self.config = config
            self.dlp = dlp
            self.compliance = compliance
            self.launch = launch
            self.directives = directives
        }
    }

    /// `SignedAppView`: the view of a `Register` or `Subscribe` reply, signed by proctord's
    /// view-signing key so that an app can cache it where its user can write and launch from
    /// it while proctord is unreachable (ProctorKit checks the signature, the app id, the user
    /// and the age). The signature covers the payload's bytes exactly as sent.
    public struct SignedAppView: ProtocolMessage {
        /// The JSON text of an `AppViewPayload`.
        public var payload: String
        /// The Ed25519 signature of `payload`'s UTF-8 bytes, in Base64.
        public var signature: String

        public init(payload: String, signature: String) {
            self.payload = payload
            self.signature = signature
        }
    }

    /// What a `SignedAppView` says: the snapshot for one app and one user at one time, its
    /// `directives` always empty (they are carried out when received, never from a cache).
    /// `managedAppsSHA256` binds the set of managed apps, which is sent apart because it can be long.
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

    /// The parameters of a method that names only the caller's session (`Subscribe`, `GetDataKey`).
    public struct SessionRequest: ProtocolMessage {
        public var session: String

        public init(session: String) { self.session = session }
    }

    public enum Register: AgentMethod {
        public static let name = "Register"

        public struct Request: ProtocolMessage {
            public var appId: String
            public var version: String?

            public init(appId: String, version: String?) {
                self.appId = appId
                self.version = version
            }
        }

        public struct Reply: ProtocolMessage {
            public var session: String
            public var snapshot: AppSnapshot
            /// Every managed app's id; always sent by `Register`.
            public var managedApps: [String]
            /// The snapshot signed, for the app's offline cache.
            public var view: SignedAppView

            public init(session: String, snapshot: AppSnapshot, managedApps: [String], view: SignedAppView) {
                self.session = session
                self.snapshot = snapshot
                self.managedApps = managedApps
                self.view = view
            }

            // The snapshot's fields are the reply's own, beside these.
            private enum CodingKeys: CodingKey { case session, managedApps, view }

            public init(from decoder: any Decoder) throws {
                let fields = try decoder.container(keyedBy: CodingKeys.self)
                session = try fields.decode(String.self, forKey: .session)
                snapshot = try AppSnapshot(from: decoder)
                managedApps = try fields.decode([String].self, forKey: .managedApps)
                view = try fields.decode(SignedAppView.self, forKey: .view)
            }

            public func encode(to encoder: any Encoder) throws {
                try snapshot.encode(to: encoder)
                var fields = encoder.container(keyedBy: CodingKeys.self)
                try fields.encode(session, forKey: .session)
                try fields.encode(managedApps, forKey: .managedApps)
                try fields.encode(view, forKey: .view)
            }
        }
    }

    public enum ReportEvent: AgentMethod {
        public static let name = "ReportEvent"

        public struct Request: ProtocolMessage {
            public var session: String
            /// One of `Agent.reportableEvents`.
            public var event: String
            public var detail: [String: JSONValue]?
            /// RFC 3339: when it happened, for a report sent later than that.
            public var occurredAt: String?

            public init(session: String, event: String, detail: [String: JSONValue]?, occurredAt: String? = nil) {
                self.session = session
                self.event = event
                self.detail = detail
                self.occurredAt = occurredAt
            }

            public func check() throws(MalformedMessage) {
                guard reportableEvents.contains(event) else { throw .notOneOf("event", event, reportableEvents.sorted()) }
                try RFC3339.check(occurredAt, field: "occurredAt")
            }
        }

        public typealias Reply = NoFields
    }

    /// Decide is the hot call: its request and reply are read and written by hand, not
    /// through their `Codable` (which `MessageCodingTests` checks them against). Through the
    /// generic coder a request of this shape takes ~4× the instructions to read and a reply
    /// ~3× to write (~12 000 more a call, the boxes and witness calls of `Codable`):
    /// over a tenth of the socket round trip that proctord's `Decide` is measured against.
    public enum Decide: AgentMethod {
        public static let name = "Decide"

        public struct Request: ProtocolMessage {
            public var session: String
            public var action: Action
            public var target: String?
            public var size: Int?

            public init(session: String, action: Action, target: String? = nil, size: Int? = nil) {
                self.session = session
                self.action = action
                self.target = target
                self.size = size
            }

            public init(_ parameters: [String: JSONValue]) throws(MalformedMessage) {
                let fields = FieldReader(parameters, keys: CodingKeys.self)
                session = try fields.required(.session, .string)
                action = try fields.choice(.action)
                target = try fields.optional(.target, .string)
                size = try fields.optional(.size, .integer)
            }

            public var fields: [String: JSONValue] {
                var fields: [String: JSONValue] = ["session": .string(session), "action": .string(action.rawValue)]
                if let target { fields["target"] = .string(target) }
                if let size { fields["size"] = .number(size) }
                return fields
            }
        }

        /// The decision, and the policy rule that made it.
        public struct Reply: ProtocolMessage {
            public var allowed: Bool
            public var rule: String
            public var reason: String

            public init(allowed: Bool, rule: String, reason: String) {
                self.allowed = allowed
                self.rule = rule
                self.reason = reason
            }

            public init(_ parameters: [String: JSONValue]) throws(MalformedMessage) {
                let fields = FieldReader(parameters, keys: CodingKeys.self)
                allowed = try fields.required(.allowed, .boolean)
                rule = try fields.required(.rule, .string)
                reason = try fields.required(.reason, .string)
            }

            public var fields: [String: JSONValue] {
                ["allowed": .bool(allowed), "rule": .string(rule), "reason": .string(reason)]
            }
        }
    }

    public enum Subscribe: AgentMethod {
        public static let name = "Subscribe"

        public typealias Request = SessionRequest

        /// The complete current state; `managedApps` only when the set changed since the
        /// session last received it, `notification` only for `reason` `notification`.
        public struct Reply: ProtocolMessage {
            public var reason: UpdateReason
            public var snapshot: AppSnapshot
            public var managedApps: [String]?
            public var notification: [String: JSONValue]?
            /// The snapshot signed, for the app's offline cache.
            public var view: SignedAppView

            public init(reason: UpdateReason, snapshot: AppSnapshot, managedApps: [String]?,
                        notification: [String: JSONValue]? = nil, view: SignedAppView) {
                self.reason = reason
                self.snapshot = snapshot
                self.managedApps = managedApps
                self.notification = notification
                self.view = view
            }

            // The snapshot's fields are the reply's own, beside these.
            private enum CodingKeys: CodingKey { case reason, managedApps, notification, view }

            public init(from decoder: any Decoder) throws {
                let fields = try decoder.container(keyedBy: CodingKeys.self)
                reason = try fields.decode(UpdateReason.self, forKey: .reason)
                snapshot = try AppSnapshot(from: decoder)
                managedApps = try fields.decodeIfPresent([String].self, forKey: .managedApps)
                notification = try fields.decodeIfPresent([String: JSONValue].self, forKey: .notification)
                view = try fields.decode(SignedAppView.self, forKey: .view)
            }

            public func encode(to encoder: any Encoder) throws {
                try snapshot.encode(to: encoder)
                var fields = encoder.container(keyedBy: CodingKeys.self)
                try fields.encode(reason, forKey: .reason)
                try fields.encodeIfPresent(managedApps, forKey: .managedApps)
                try fields.encodeIfPresent(notification, forKey: .notification)
                try fields.encode(view, forKey: .view)
            }
        }
    }

    public enum AcknowledgeWipe: AgentMethod {
        public static let name = "AcknowledgeWipe"

        public struct Request: ProtocolMessage {
            public var session: String
            public var directiveId: String
            /// Absent means `completed`.
            public var outcome: WipeOutcome?
            public var message: String?

            public init(session: String, directiveId: String, outcome: WipeOutcome? = nil, message: String? = nil) {
                self.session = session
                self.directiveId = directiveId
                self.outcome = outcome
                self.message = message
            }
        }

        public typealias Reply = NoFields
    }

    public enum ReportFeedback: AgentMethod {
        public static let name = "ReportFeedback"

        public struct Request: ProtocolMessage {
            public var session: String
            public var key: String
            public var severity: FeedbackSeverity
            public var message: String
            public var data: [String: JSONValue]?

            public init(session: String, key: String, severity: FeedbackSeverity, message: String, data: [String: JSONValue]?) {
                self.session = session
                self.key = key
                self.severity = severity
                self.message = message
                self.data = data
            }
        }

        public typealias Reply = NoFields
    }

    public enum GetDataKey: AgentMethod {
        public static let name = "GetDataKey"

        public typealias Request = SessionRequest

        /// The key in Base64 (key material: never log a reply), its public id and generation.
        public struct Reply: ProtocolMessage, CustomStringConvertible {
            public var key: String
            public var keyId: String
            public var generation: Int

            public init(key: String, keyId: String, generation: Int) {
                self.key = key
                self.keyId = keyId
                self.generation = generation
            }

            /// Leaves the key out, so a reply that ends up in a log line does not leak it.
            public var description: String { "GetDataKey.Reply(keyId: \(keyId), generation: \(generation))" }
        }
    }

    public enum GetInfo: AgentMethod {
        public static let name = "GetInfo"

        public typealias Request = NoFields

        public struct Reply: ProtocolMessage {
            /// The public key that signs app views, in its one-line text form
            /// (`ed25519 <key id> <Base64 key>`).
            public var viewSigningKey: String

            public init(viewSigningKey: String) { self.viewSigningKey = viewSigningKey }
        }
    }

    /// Every method of the interface, for checks against the interface file.
    public static let methods: [any ProtocolMethod.Type] = [
        Register.self, ReportEvent.self, Decide.self, Subscribe.self, AcknowledgeWipe.self, ReportFeedback.self,
        GetDataKey.self, GetInfo.self,
    ]
}
