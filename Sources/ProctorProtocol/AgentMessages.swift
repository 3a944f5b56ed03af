public import JSONCore
public import ProctorPolicy

/// `io.proctor.Agent`: the methods managed apps call (through ProctorKit), their parameters
/// and replies. The contract is `Interfaces/io.proctor.Agent.varlink`; to add a field, add
/// it there and to the one message type here that carries it.
public enum Agent {
    public static let interface = "io.proctor.Agent"

    /// Why a `Subscribe` reply was sent (`UpdateReason`).
    public enum UpdateReason: String, Sendable, CaseIterable {
        case current, policy, wipe, notification, refresh
    }

    /// How a wipe ended on the app's side (`WipeOutcome`).
    public enum WipeOutcome: String, Sendable, CaseIterable {
        case completed, failed
    }

    /// How serious a feedback entry is (`FeedbackSeverity`).
    public enum FeedbackSeverity: String, Sendable, CaseIterable {
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

        public init(reading message: MessageReader) throws(MalformedMessage) {
            allowed = try message.bool("allowed")
            rule = try message.string("rule")
            reason = try message.string("reason")
            violation = try message.optionalChoice("violation")
        }

        public var fields: [String: JSONValue] {
            var fields: [String: JSONValue] = ["allowed": .bool(allowed), "rule": .string(rule), "reason": .string(reason)]
            if let violation { fields["violation"] = .string(violation.rawValue) }
            return fields
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

        public init(reading message: MessageReader) throws(MalformedMessage) {
            id = try message.string("id")
            issuedAt = try message.string("issuedAt")
        }

        public var fields: [String: JSONValue] { ["id": .string(id), "issuedAt": .string(issuedAt)] }
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

        public init(reading message: MessageReader) throws(MalformedMessage) {
            state = try message.choice("state")
            policyVersion = try message.string("policyVersion")
            config = try message.object("config")
            dlp = try message.object("dlp")
            compliance = try message.object("compliance")
            launch = try message.message("launch")
            directives = try message.messages("directives")
        }

        public var fields: [String: JSONValue] {
            ["state": .string(state.rawValue), "policyVersion": .string(policyVersion), "config": .object(config),
             "dlp": .object(dlp), "compliance": .object(compliance), "launch": launch.json, "directives": .messages(directives)]
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

        public init(reading message: MessageReader) throws(MalformedMessage) {
            payload = try message.string("payload")
            signature = try message.string("signature")
        }

        public var fields: [String: JSONValue] { ["payload": .string(payload), "signature": .string(signature)] }
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

        public init(reading message: MessageReader) throws(MalformedMessage) {
            appId = try message.string("appId")
            uid = try message.int("uid")
            issuedAt = try message.string("issuedAt")
            guard RFC3339.milliseconds(issuedAt) != nil else {
                throw MalformedMessage(field: message.path(of: "issuedAt"), reason: "\"\(issuedAt.prefix(64))\" is not an RFC 3339 time")
            }
            snapshot = try AppSnapshot(reading: message)
            snapshot.directives = []
            managedAppsSHA256 = try message.string("managedAppsSHA256")
        }

        public var fields: [String: JSONValue] {
            var fields = snapshot.fields
            fields["appId"] = .string(appId)
            fields["uid"] = .number(uid)
            fields["issuedAt"] = .string(issuedAt)
            fields["managedAppsSHA256"] = .string(managedAppsSHA256)
            return fields
        }

        /// The SHA-256 (hex) of the canonical JSON array of `managedApps`, in the order sent.
        public static func digest(managedApps: [String]) -> String {
            SHA256.hexDigest(JSONValue.strings(managedApps).serialized())
        }
    }

    /// The parameters of a method that names only the caller's session (`Subscribe`, `GetDataKey`).
    public struct SessionRequest: ProtocolMessage {
        public var session: String

        public init(session: String) { self.session = session }

        public init(reading message: MessageReader) throws(MalformedMessage) {
            session = try message.string("session")
        }

        public var fields: [String: JSONValue] { ["session": .string(session)] }
    }

    public enum Register: ProtocolMethod {
        public static let interface = Agent.interface
        public static let name = "Register"

        public struct Request: ProtocolMessage {
            public var appId: String
            public var version: String?

            public init(appId: String, version: String?) {
                self.appId = appId
                self.version = version
            }

            public init(reading message: MessageReader) throws(MalformedMessage) {
                appId = try message.string("appId")
                version = try message.optionalString("version")
            }

            public var fields: [String: JSONValue] {
                var fields: [String: JSONValue] = ["appId": .string(appId)]
                if let version { fields["version"] = .string(version) }
                return fields
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

            public init(reading message: MessageReader) throws(MalformedMessage) {
                session = try message.string("session")
                snapshot = try AppSnapshot(reading: message)
                managedApps = try message.strings("managedApps")
                view = try message.message("view")
            }

            public var fields: [String: JSONValue] {
                var fields = snapshot.fields
                fields["session"] = .string(session)
                fields["managedApps"] = .strings(managedApps)
                fields["view"] = view.json
                return fields
            }
        }
    }

    public enum ReportEvent: ProtocolMethod {
        public static let interface = Agent.interface
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

            public init(reading message: MessageReader) throws(MalformedMessage) {
                session = try message.string("session")
                event = try message.string("event")
                guard reportableEvents.contains(event) else {
                    throw MalformedMessage(field: message.path(of: "event"),
                                           reason: "expected one of \(reportableEvents.sorted().joined(separator: ", "))")
                }
                detail = try message.optionalObject("detail")
                occurredAt = try message.optionalString("occurredAt")
                if let occurredAt, RFC3339.milliseconds(occurredAt) == nil {
                    throw MalformedMessage(field: message.path(of: "occurredAt"),
                                           reason: "\"\(occurredAt)\" is not an RFC 3339 time such as 2026-11-29T12:00:00Z")
                }
            }

            public var fields: [String: JSONValue] {
                var fields: [String: JSONValue] = ["session": .string(session), "event": .string(event)]
                if let detail { fields["detail"] = .object(detail) }
                if let occurredAt { fields["occurredAt"] = .string(occurredAt) }
                return fields
            }
        }

        public typealias Reply = NoFields
    }

    public enum Decide: ProtocolMethod {
        public static let interface = Agent.interface
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

            public init(reading message: MessageReader) throws(MalformedMessage) {
                session = try message.string("session")
                action = try message.action()
                target = try message.optionalString("target")
                size = try message.optionalInt("size")
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

            public init(_ decision: Decision) {
                self.init(allowed: decision.allowed, rule: decision.rule, reason: decision.reason)
            }

            public init(reading message: MessageReader) throws(MalformedMessage) {
                allowed = try message.bool("allowed")
                rule = try message.string("rule")
                reason = try message.string("reason")
            }

            public var fields: [String: JSONValue] {
                ["allowed": .bool(allowed), "rule": .string(rule), "reason": .string(reason)]
            }
        }
    }

    public enum Subscribe: ProtocolMethod {
        public static let interface = Agent.interface
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

            public init(reading message: MessageReader) throws(MalformedMessage) {
                reason = try message.choice("reason")
                snapshot = try AppSnapshot(reading: message)
                managedApps = try message.optionalStrings("managedApps")
                notification = try message.optionalObject("notification")
                view = try message.message("view")
            }

            public var fields: [String: JSONValue] {
                var fields = snapshot.fields
                fields["reason"] = .string(reason.rawValue)
                fields["view"] = view.json
                if let managedApps { fields["managedApps"] = .strings(managedApps) }
                if let notification { fields["notification"] = .object(notification) }
                return fields
            }
        }
    }

    public enum AcknowledgeWipe: ProtocolMethod {
        public static let interface = Agent.interface
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

            public init(reading message: MessageReader) throws(MalformedMessage) {
                session = try message.string("session")
                directiveId = try message.string("directiveId")
                outcome = try message.optionalChoice("outcome")
                self.message = try message.optionalString("message")
            }

            public var fields: [String: JSONValue] {
                var fields: [String: JSONValue] = ["session": .string(session), "directiveId": .string(directiveId)]
                if let outcome { fields["outcome"] = .string(outcome.rawValue) }
                if let message { fields["message"] = .string(message) }
                return fields
            }
        }

        public typealias Reply = NoFields
    }

    public enum ReportFeedback: ProtocolMethod {
        public static let interface = Agent.interface
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

            public init(reading message: MessageReader) throws(MalformedMessage) {
                session = try message.string("session")
                key = try message.string("key")
                severity = try message.choice("severity")
                self.message = try message.string("message")
                data = try message.optionalObject("data")
            }

            public var fields: [String: JSONValue] {
                var fields: [String: JSONValue] = ["session": .string(session), "key": .string(key),
                                                   "severity": .string(severity.rawValue), "message": .string(message)]
                if let data { fields["data"] = .object(data) }
                return fields
            }
        }

        public typealias Reply = NoFields
    }

    public enum GetDataKey: ProtocolMethod {
        public static let interface = Agent.interface
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

            public init(reading message: MessageReader) throws(MalformedMessage) {
                key = try message.string("key")
                keyId = try message.string("keyId")
                generation = try message.int("generation")
            }

            public var fields: [String: JSONValue] {
                ["key": .string(key), "keyId": .string(keyId), "generation": .number(generation)]
            }

            /// Leaves the key out, so a reply that ends up in a log line does not leak it.
            public var description: String { "GetDataKey.Reply(keyId: \(keyId), generation: \(generation))" }
        }
    }

    public enum GetInfo: ProtocolMethod {
        public static let interface = Agent.interface
        public static let name = "GetInfo"

        public typealias Request = NoFields

        public struct Reply: ProtocolMessage {
            /// The public key that signs app views, in its one-line text form
            /// (`ed25519 <key id> <Base64 key>`).
            public var viewSigningKey: String

            public init(viewSigningKey: String) { self.viewSigningKey = viewSigningKey }

            public init(reading message: MessageReader) throws(MalformedMessage) {
                viewSigningKey = try message.string("viewSigningKey")
            }

            public var fields: [String: JSONValue] { ["viewSigningKey": .string(viewSigningKey)] }
        }
    }

    /// Every method of the interface, for checks against the interface file.
    public static let methods: [any ProtocolMethod.Type] = [
        Register.self, ReportEvent.self, Decide.self, Subscribe.self, AcknowledgeWipe.self, ReportFeedback.self,
        GetDataKey.self, GetInfo.self,
    ]
}

extension MessageReader {
    /// The `action` field (both interfaces' `Decide`), which must name an `Action`.
    func action() throws(MalformedMessage) -> Action {
        let text = try string("action")
        guard let action = Action(rawValue: text) else {
            throw MalformedMessage(field: path(of: "action"), reason: "expected one of "
                + "\(Action.allCases.map(\.rawValue).joined(separator: ", ")), got \"\(text.prefix(64))\"")
        }
        return action
    }
}
