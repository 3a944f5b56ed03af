public import JSONCore
public import ProctorPolicy

/// `io.proctor.Admin`: the methods administrators and MDM connectors call (proctorctl),
/// their parameters and replies. The contract is `Interfaces/io.proctor.Admin.varlink`; to
/// add a field, add it there and to the one message type here that carries it. Times are
/// RFC 3339 strings in UTC, as on the wire.
public enum Admin {
    public static let interface = "io.proctor.Admin"

    /// `Problem`: a problem found in a policy document, at a JSON path.
    public struct Problem: ProtocolMessage {
        public var path: String
        public var message: String
        public var line: Int?
        public var column: Int?

        public init(path: String, message: String, line: Int? = nil, column: Int? = nil) {
            self.path = path
            self.message = message
            self.line = line
            self.column = column
        }

        /// The path plus a message that carries the file, line and column when there are any.
        public init(_ problem: PolicyProblem) {
            self.init(path: problem.path.description, message: problem.description,
                      line: problem.location?.line, column: problem.location?.column)
        }

        public init(reading message: MessageReader) throws(MalformedMessage) {
            path = try message.string("path")
            self.message = try message.string("message")
            line = try message.optionalInt("line")
            column = try message.optionalInt("column")
        }

        public var fields: [String: JSONValue] {
            var fields: [String: JSONValue] = ["path": .string(path), "message": .string(message)]
            if let line { fields["line"] = .number(line) }
            if let column { fields["column"] = .number(column) }
            return fields
        }
    }

    /// `PolicyInfo`: the policy in force and where it came from.
    public struct PolicyInfo: ProtocolMessage {
        public var version: String
        public var sha256: String
        public var sources: [String]
        public var loadedAt: String

        public init(version: String, sha256: String, sources: [String], loadedAt: String) {
            self.version = version
            self.sha256 = sha256
            self.sources = sources
            self.loadedAt = loadedAt
        }

        public init(reading message: MessageReader) throws(MalformedMessage) {
            version = try message.string("version")
            sha256 = try message.string("sha256")
            sources = try message.strings("sources")
            loadedAt = try message.string("loadedAt")
        }

        public var fields: [String: JSONValue] {
            ["version": .string(version), "sha256": .string(sha256), "sources": .strings(sources), "loadedAt": .string(loadedAt)]
        }
    }

    /// `ReloadResult`: the outcome of the last reload attempt.
    public struct ReloadResult: ProtocolMessage {
        public var at: String
        public var ok: Bool
        public var problems: [Problem]

        public init(at: String, ok: Bool, problems: [Problem]) {
            self.at = at
            self.ok = ok
            self.problems = problems
        }

        public init(reading message: MessageReader) throws(MalformedMessage) {
            at = try message.string("at")
            ok = try message.bool("ok")
            problems = try message.messages("problems")
        }

        public var fields: [String: JSONValue] { ["at": .string(at), "ok": .bool(ok), "problems": .messages(problems)] }
    }

    /// `FleetStatus`: signed bundles and pulling them from the MDM.
    public struct FleetStatus: ProtocolMessage {
        public var bundleUrl: String?
        public var requireSignedBundles: Bool
        public var trustedKeys: [String]
        public var lastAppliedSerial: Int?
        /// When the serial in force was applied (kept across restarts).
        public var lastAppliedAt: String?
        public var lastFetchAt: String?
        /// The last fetch the server answered (a bundle or a 304), whatever came of the bundle.
        public var lastSuccessfulFetchAt: String?
        /// `fetched`, `unchanged`, `applied`, `refused` or `failed`.
        public var lastFetchResult: String?
        public var nextFetchAt: String?
        public var lastError: FleetError?
        /// Since proctord started.
        public var fetchFailures: Int
        public var bundlesRefused: Int

        public init(bundleUrl: String?, requireSignedBundles: Bool, trustedKeys: [String], lastAppliedSerial: Int?,
                    lastAppliedAt: String?, lastFetchAt: String?, lastSuccessfulFetchAt: String?,
                    lastFetchResult: String?, nextFetchAt: String?, lastError: FleetError?,
                    fetchFailures: Int, bundlesRefused: Int) {
            self.bundleUrl = bundleUrl
            self.requireSignedBundles = requireSignedBundles
            self.trustedKeys = trustedKeys
            self.lastAppliedSerial = lastAppliedSerial
            self.lastAppliedAt = lastAppliedAt
            self.lastFetchAt = lastFetchAt
            self.lastSuccessfulFetchAt = lastSuccessfulFetchAt
            self.lastFetchResult = lastFetchResult
            self.nextFetchAt = nextFetchAt
            self.lastError = lastError
            self.fetchFailures = fetchFailures
            self.bundlesRefused = bundlesRefused
        }

        public init(reading message: MessageReader) throws(MalformedMessage) {
            bundleUrl = try message.optionalString("bundleUrl")
            requireSignedBundles = try message.bool("requireSignedBundles")
            trustedKeys = try message.strings("trustedKeys")
            lastAppliedSerial = try message.optionalInt("lastAppliedSerial")
            lastAppliedAt = try message.optionalString("lastAppliedAt")
            lastFetchAt = try message.optionalString("lastFetchAt")
            lastSuccessfulFetchAt = try message.optionalString("lastSuccessfulFetchAt")
            lastFetchResult = try message.optionalString("lastFetchResult")
            nextFetchAt = try message.optionalString("nextFetchAt")
            lastError = try message.optionalMessage("lastError")
            fetchFailures = try message.int("fetchFailures")
            bundlesRefused = try message.int("bundlesRefused")
        }

        public var fields: [String: JSONValue] {
            var fields: [String: JSONValue] = ["requireSignedBundles": .bool(requireSignedBundles),
                                               "trustedKeys": .array(trustedKeys.map(JSONValue.string)),
                                               "fetchFailures": .number(fetchFailures), "bundlesRefused": .number(bundlesRefused)]
            if let bundleUrl { fields["bundleUrl"] = .string(bundleUrl) }
            if let lastAppliedSerial { fields["lastAppliedSerial"] = .number(lastAppliedSerial) }
            if let lastAppliedAt { fields["lastAppliedAt"] = .string(lastAppliedAt) }
            if let lastFetchAt { fields["lastFetchAt"] = .string(lastFetchAt) }
            if let lastSuccessfulFetchAt { fields["lastSuccessfulFetchAt"] = .string(lastSuccessfulFetchAt) }
            if let lastFetchResult { fields["lastFetchResult"] = .string(lastFetchResult) }
            if let nextFetchAt { fields["nextFetchAt"] = .string(nextFetchAt) }
            if let lastError { fields["lastError"] = lastError.json }
            return fields
        }
    }

    /// `FleetError`: why the last bundle was refused or the last fetch failed.
    public struct FleetError: ProtocolMessage {
        public var at: String
        public var reason: String
        public var message: String

        public init(at: String, reason: String, message: String) {
            self.at = at
            self.reason = reason
            self.message = message
        }

        public init(reading message: MessageReader) throws(MalformedMessage) {
            at = try message.string("at")
            reason = try message.string("reason")
            self.message = try message.string("message")
        }

        public var fields: [String: JSONValue] { ["at": .string(at), "reason": .string(reason), "message": .string(message)] }
    }

    /// `Counts`: apps, sessions, decisions (in all and by action), registrations refused, log
    /// messages dropped or lost, and state storage failures.
    public struct Counts: ProtocolMessage {
        public var appsKnown: Int
        public var appsConnected: Int
        public var sessions: Int
        public var decisionsAllowed: Int
        public var decisionsDenied: Int
        public var decisions: [DecisionCount]
        public var registrationsRefused: [RefusalCount]
        public var logMessagesDropped: Int
        public var logSinkFailures: Int
        public var storageFailures: Int

        public init(appsKnown: Int, appsConnected: Int, sessions: Int, decisionsAllowed: Int, decisionsDenied: Int,
                    decisions: [DecisionCount], registrationsRefused: [RefusalCount],
                    logMessagesDropped: Int, logSinkFailures: Int, storageFailures: Int) {
            self.appsKnown = appsKnown
            self.appsConnected = appsConnected
            self.sessions = sessions
            self.decisionsAllowed = decisionsAllowed
            self.decisionsDenied = decisionsDenied
            self.decisions = decisions
            self.registrationsRefused = registrationsRefused
            self.logMessagesDropped = logMessagesDropped
            self.logSinkFailures = logSinkFailures
            self.storageFailures = storageFailures
        }

        public init(reading message: MessageReader) throws(MalformedMessage) {
            appsKnown = try message.int("appsKnown")
            appsConnected = try message.int("appsConnected")
            sessions = try message.int("sessions")
            decisionsAllowed = try message.int("decisionsAllowed")
            decisionsDenied = try message.int("decisionsDenied")
            decisions = try message.messages("decisions")
            registrationsRefused = try message.messages("registrationsRefused")
            logMessagesDropped = try message.int("logMessagesDropped")
            logSinkFailures = try message.int("logSinkFailures")
            storageFailures = try message.int("storageFailures")
        }

        public var fields: [String: JSONValue] {
            ["appsKnown": .number(appsKnown), "appsConnected": .number(appsConnected), "sessions": .number(sessions),
             "decisionsAllowed": .number(decisionsAllowed), "decisionsDenied": .number(decisionsDenied),
             "decisions": .messages(decisions), "registrationsRefused": .messages(registrationsRefused),
             "logMessagesDropped": .number(logMessagesDropped), "logSinkFailures": .number(logSinkFailures),
             "storageFailures": .number(storageFailures)]
        }
    }

    /// `DecisionCount`: decisions on one action since proctord started.
    public struct DecisionCount: ProtocolMessage {
        public var action: String
        public var allowed: Int
        public var denied: Int

        public init(action: String, allowed: Int, denied: Int) {
            self.action = action
            self.allowed = allowed
            self.denied = denied
        }

        public init(reading message: MessageReader) throws(MalformedMessage) {
            action = try message.string("action")
            allowed = try message.int("allowed")
            denied = try message.int("denied")
        }

        public var fields: [String: JSONValue] { ["action": .string(action), "allowed": .number(allowed), "denied": .number(denied)] }
    }

    /// `RefusalCount`: refusals for one reason since proctord started.
    public struct RefusalCount: ProtocolMessage {
        public var reason: String
        public var count: Int

        public init(reason: String, count: Int) {
            self.reason = reason
            self.count = count
        }

        public init(reading message: MessageReader) throws(MalformedMessage) {
            reason = try message.string("reason")
            count = try message.int("count")
        }

        public var fields: [String: JSONValue] { ["reason": .string(reason), "count": .number(count)] }
    }

    /// `Session`: a connected session of an app.
    public struct Session: ProtocolMessage {
        public var id: String
        public var pid: Int
        public var uid: Int
        public var executable: String
        public var registeredAt: String
        public var subscribed: Bool
        /// Who enforces the export rule in this process, as the SDK reported it; absent when it
        /// did not (enforcement `advisory` in policy, or an SDK that does not report it).
        public var fileExportEnforcement: FileExportEnforcement?

        public init(id: String, pid: Int, uid: Int, executable: String, registeredAt: String, subscribed: Bool,
                    fileExportEnforcement: FileExportEnforcement? = nil) {
            self.id = id
            self.pid = pid
            self.uid = uid
            self.executable = executable
            self.registeredAt = registeredAt
            self.subscribed = subscribed
            self.fileExportEnforcement = fileExportEnforcement
        }

        public init(reading message: MessageReader) throws(MalformedMessage) {
            id = try message.string("id")
            pid = try message.int("pid")
            uid = try message.int("uid")
            executable = try message.string("executable")
            registeredAt = try message.string("registeredAt")
            subscribed = try message.bool("subscribed")
            fileExportEnforcement = try message.optionalMessage("fileExportEnforcement")
        }

        public var fields: [String: JSONValue] {
            var fields: [String: JSONValue] = [
                "id": .string(id), "pid": .number(pid), "uid": .number(uid), "executable": .string(executable),
                "registeredAt": .string(registeredAt), "subscribed": .bool(subscribed)]
            if let fileExportEnforcement { fields["fileExportEnforcement"] = fileExportEnforcement.json }
            return fields
        }
    }

    /// `FileExportEnforcement`: who enforces a session's export rule — `kernel` (Landlock, at
    /// `landlockABI`) or `advisory` (the app asks DataGuard), with the SDK's `reason` for falling
    /// back — and when the SDK said so.
    public struct FileExportEnforcement: ProtocolMessage {
        public enum Mode: String, Sendable, CaseIterable { case kernel, advisory }

        public var mode: Mode
        public var landlockABI: Int?
        public var reason: String?
        public var at: String

        public init(mode: Mode, landlockABI: Int?, reason: String?, at: String) {
            self.mode = mode
            self.landlockABI = landlockABI
            self.reason = reason
            self.at = at
        }

        public init(reading message: MessageReader) throws(MalformedMessage) {
            mode = try message.choice("mode")
            landlockABI = try message.optionalInt("landlockABI")
            reason = try message.optionalString("reason")
            at = try message.string("at")
        }

        public var fields: [String: JSONValue] {
            var fields: [String: JSONValue] = ["mode": .string(mode.rawValue), "at": .string(at)]
            if let landlockABI { fields["landlockABI"] = .number(landlockABI) }
            if let reason { fields["reason"] = .string(reason) }
            return fields
        }
    }

    /// `Registration`: the last registration of an app.
    public struct Registration: ProtocolMessage {
        public var at: String
        public var version: String?
        public var pid: Int
        public var uid: Int

        public init(at: String, version: String?, pid: Int, uid: Int) {
            self.at = at
            self.version = version
            self.pid = pid
            self.uid = uid
        }

        public init(reading message: MessageReader) throws(MalformedMessage) {
            at = try message.string("at")
            version = try message.optionalString("version")
            pid = try message.int("pid")
            uid = try message.int("uid")
        }

        public var fields: [String: JSONValue] {
            var fields: [String: JSONValue] = ["at": .string(at), "pid": .number(pid), "uid": .number(uid)]
            if let version { fields["version"] = .string(version) }
            return fields
        }
    }

    /// `LifecycleEvent`: the last lifecycle event an app reported.
    public struct LifecycleEvent: ProtocolMessage {
        public var at: String
        public var event: String

        public init(at: String, event: String) {
            self.at = at
            self.event = event
        }

        public init(reading message: MessageReader) throws(MalformedMessage) {
            at = try message.string("at")
            event = try message.string("event")
        }

        public var fields: [String: JSONValue] { ["at": .string(at), "event": .string(event)] }
    }

    /// `Feedback`: the latest feedback entry under one key.
    public struct Feedback: ProtocolMessage {
        public var key: String
        /// `info` or `error`.
        public var severity: Agent.FeedbackSeverity
        public var message: String
        public var data: [String: JSONValue]?
        public var at: String

        public init(key: String, severity: Agent.FeedbackSeverity, message: String, data: [String: JSONValue]?, at: String) {
            self.key = key
            self.severity = severity
            self.message = message
            self.data = data
            self.at = at
        }

        public init(reading message: MessageReader) throws(MalformedMessage) {
            key = try message.string("key")
            severity = try message.choice("severity")
            self.message = try message.string("message")
            data = try message.optionalObject("data")
            at = try message.string("at")
        }

        /// `data` is sent as null when there is none.
        public var fields: [String: JSONValue] {
            ["key": .string(key), "severity": .string(severity.rawValue), "message": .string(message),
             "data": data.map(JSONValue.object) ?? .null, "at": .string(at)]
        }
    }

    /// `WipeRecord`: a wipe directive and how far it got.
    public struct WipeRecord: ProtocolMessage {
        public enum State: String, Sendable, CaseIterable { case issued, delivered, completed }

        public var id: String
        public var issuedAt: String
        public var issuedByUid: Int
        public var state: State
        public var deliveredAt: String?
        public var completedAt: String?

        public init(id: String, issuedAt: String, issuedByUid: Int, state: State, deliveredAt: String?, completedAt: String?) {
            self.id = id
            self.issuedAt = issuedAt
            self.issuedByUid = issuedByUid
            self.state = state
            self.deliveredAt = deliveredAt
            self.completedAt = completedAt
        }

        public init(reading message: MessageReader) throws(MalformedMessage) {
            id = try message.string("id")
            issuedAt = try message.string("issuedAt")
            issuedByUid = try message.int("issuedByUid")
            state = try message.choice("state")
            deliveredAt = try message.optionalString("deliveredAt")
            completedAt = try message.optionalString("completedAt")
        }

        public var fields: [String: JSONValue] {
            var fields: [String: JSONValue] = ["id": .string(id), "issuedAt": .string(issuedAt),
                                               "issuedByUid": .number(issuedByUid), "state": .string(state.rawValue)]
            if let deliveredAt { fields["deliveredAt"] = .string(deliveredAt) }
            if let completedAt { fields["completedAt"] = .string(completedAt) }
            return fields
        }
    }

    /// `DataKeyState`: one generation of an app's data key for one user, never the key.
    public struct DataKeyState: ProtocolMessage {
        public var uid: Int
        public var generation: Int
        public var keyId: String
        public var createdAt: String
        public var lastReleasedAt: String?
        public var destroyedAt: String?

        public init(uid: Int, generation: Int, keyId: String, createdAt: String, lastReleasedAt: String?, destroyedAt: String?) {
            self.uid = uid
            self.generation = generation
            self.keyId = keyId
            self.createdAt = createdAt
            self.lastReleasedAt = lastReleasedAt
            self.destroyedAt = destroyedAt
        }

        public init(reading message: MessageReader) throws(MalformedMessage) {
            uid = try message.int("uid")
            generation = try message.int("generation")
            keyId = try message.string("keyId")
            createdAt = try message.string("createdAt")
            lastReleasedAt = try message.optionalString("lastReleasedAt")
            destroyedAt = try message.optionalString("destroyedAt")
        }

        public var fields: [String: JSONValue] {
            var fields: [String: JSONValue] = ["uid": .number(uid), "generation": .number(generation), "keyId": .string(keyId),
                                               "createdAt": .string(createdAt)]
            if let lastReleasedAt { fields["lastReleasedAt"] = .string(lastReleasedAt) }
            if let destroyedAt { fields["destroyedAt"] = .string(destroyedAt) }
            return fields
        }
    }

    /// `PolicyAcknowledgement`: what the app said it did with a policy version.
    public struct PolicyAcknowledgement: ProtocolMessage {
        public enum Status: String, Sendable, CaseIterable { case applied, error, unsupported }

        public var policyVersion: String
        public var status: Status
        public var at: String

        public init(policyVersion: String, status: Status, at: String) {
            self.policyVersion = policyVersion
            self.status = status
            self.at = at
        }

        public init(reading message: MessageReader) throws(MalformedMessage) {
            policyVersion = try message.string("policyVersion")
            status = try message.choice("status")
            at = try message.string("at")
        }

        public var fields: [String: JSONValue] {
            ["policyVersion": .string(policyVersion), "status": .string(status.rawValue), "at": .string(at)]
        }
    }

    /// `AppSummary`: one line of `ListApps`. `state` is nil for an app no longer in policy.
    public struct AppSummary: ProtocolMessage {
        public var appId: String
        public var inPolicy: Bool
        public var state: AppState?
        public var connectedSessions: Int
        public var lastSeen: String?
        public var version: String?

        public init(appId: String, inPolicy: Bool, state: AppState?, connectedSessions: Int, lastSeen: String?, version: String?) {
            self.appId = appId
            self.inPolicy = inPolicy
            self.state = state
            self.connectedSessions = connectedSessions
            self.lastSeen = lastSeen
            self.version = version
        }

        public init(reading message: MessageReader) throws(MalformedMessage) {
            appId = try message.string("appId")
            inPolicy = try message.bool("inPolicy")
            state = try message.optionalChoice("state")
            connectedSessions = try message.int("connectedSessions")
            lastSeen = try message.optionalString("lastSeen")
            version = try message.optionalString("version")
        }

        public var fields: [String: JSONValue] {
            var fields: [String: JSONValue] = ["appId": .string(appId), "inPolicy": .bool(inPolicy),
                                               "connectedSessions": .number(connectedSessions)]
            if let state { fields["state"] = .string(state.rawValue) }
            if let lastSeen { fields["lastSeen"] = .string(lastSeen) }
            if let version { fields["version"] = .string(version) }
            return fields
        }
    }

    /// `AppDetail`: one app in detail (`GetApp`).
    public struct AppDetail: ProtocolMessage {
        public var appId: String
        public var inPolicy: Bool
        public var state: AppState?
        public var sessions: [Session]
        public var lastRegistration: Registration?
        public var lastEvent: LifecycleEvent?
        public var config: [String: JSONValue]
        public var dlp: [String: JSONValue]
        public var compliance: [String: JSONValue]
        public var feedback: [Feedback]
        public var acknowledgements: [PolicyAcknowledgement]
        public var wipes: [WipeRecord]
        /// The app's data-key generations by user; set after `init` (absent: none).
        public var dataKeys: [DataKeyState]? = nil
        /// The version of the policy in force.
        public var policyVersion: String?
        /// Nil for an app that never registered or is not in policy.
        public var complianceState: ComplianceState?

        public init(appId: String, inPolicy: Bool, state: AppState?, sessions: [Session], lastRegistration: Registration?,
                    lastEvent: LifecycleEvent?, config: [String: JSONValue], dlp: [String: JSONValue],
                    compliance: [String: JSONValue], feedback: [Feedback], acknowledgements: [PolicyAcknowledgement],
                    wipes: [WipeRecord]) {
            self.appId = appId
            self.inPolicy = inPolicy
            self.state = state
            self.sessions = sessions
            self.lastRegistration = lastRegistration
            self.lastEvent = lastEvent
            self.config = config
            self.dlp = dlp
            self.compliance = compliance
            self.feedback = feedback
            self.acknowledgements = acknowledgements
            self.wipes = wipes
        }

        public init(reading message: MessageReader) throws(MalformedMessage) {
            appId = try message.string("appId")
            inPolicy = try message.bool("inPolicy")
            state = try message.optionalChoice("state")
            sessions = try message.messages("sessions")
            lastRegistration = try message.optionalMessage("lastRegistration")
            lastEvent = try message.optionalMessage("lastEvent")
            config = try message.object("config")
            dlp = try message.object("dlp")
            compliance = try message.object("compliance")
            feedback = try message.messages("feedback")
            acknowledgements = try message.messages("acknowledgements")
            wipes = try message.messages("wipes")
            dataKeys = try message.optionalMessages("dataKeys")
            policyVersion = try message.optionalString("policyVersion")
            complianceState = try message.optionalMessage("complianceState")
        }

        public var fields: [String: JSONValue] {
            var fields: [String: JSONValue] = [
                "appId": .string(appId), "inPolicy": .bool(inPolicy), "sessions": .messages(sessions),
                "config": .object(config), "dlp": .object(dlp), "compliance": .object(compliance),
                "feedback": .messages(feedback), "acknowledgements": .messages(acknowledgements), "wipes": .messages(wipes),
            ]
            if let state { fields["state"] = .string(state.rawValue) }
            if let lastRegistration { fields["lastRegistration"] = lastRegistration.json }
            if let lastEvent { fields["lastEvent"] = lastEvent.json }
            if let dataKeys { fields["dataKeys"] = .messages(dataKeys) }
            if let policyVersion { fields["policyVersion"] = .string(policyVersion) }
            if let complianceState { fields["complianceState"] = complianceState.json }
            return fields
        }
    }

    /// `ComplianceState`: whether the app's last registered version meets its compliance settings.
    public struct ComplianceState: ProtocolMessage {
        public var compliant: Bool
        public var reason: String

        public init(compliant: Bool, reason: String) {
            self.compliant = compliant
            self.reason = reason
        }

        public init(reading message: MessageReader) throws(MalformedMessage) {
            compliant = try message.bool("compliant")
            reason = try message.string("reason")
        }

        public var fields: [String: JSONValue] { ["compliant": .bool(compliant), "reason": .string(reason)] }
    }

    /// `HistoryEntry`: an applied policy kept for rollback.
    public struct HistoryEntry: ProtocolMessage {
        public enum Kind: String, Sendable, CaseIterable { case apply, rollback }

        public var version: String
        public var sha256: String
        public var appliedAt: String
        public var appliedByUid: Int?
        public var kind: Kind
        public var current: Bool

        public init(version: String, sha256: String, appliedAt: String, appliedByUid: Int?, kind: Kind, current: Bool) {
            self.version = version
            self.sha256 = sha256
            self.appliedAt = appliedAt
            self.appliedByUid = appliedByUid
            self.kind = kind
            self.current = current
        }

        public init(reading message: MessageReader) throws(MalformedMessage) {
            version = try message.string("version")
            sha256 = try message.string("sha256")
            appliedAt = try message.string("appliedAt")
            appliedByUid = try message.optionalInt("appliedByUid")
            kind = try message.choice("kind")
            current = try message.bool("current")
        }

        public var fields: [String: JSONValue] {
            var fields: [String: JSONValue] = ["version": .string(version), "sha256": .string(sha256),
                                               "appliedAt": .string(appliedAt), "kind": .string(kind.rawValue),
                                               "current": .bool(current)]
            if let appliedByUid { fields["appliedByUid"] = .number(appliedByUid) }
            return fields
        }
    }

    /// `EventFilter`: which events `Events` sends.
    public struct EventFilter: ProtocolMessage {
        public var appId: String?
        public var kinds: [String]?

        public init(appId: String? = nil, kinds: [String]? = nil) {
            self.appId = appId
            self.kinds = kinds
        }

        public init(reading message: MessageReader) throws(MalformedMessage) {
            appId = try message.optionalString("appId")
            kinds = try message.optionalStrings("kinds")
        }

        public var fields: [String: JSONValue] {
            var fields: [String: JSONValue] = [:]
            if let appId { fields["appId"] = .string(appId) }
            if let kinds { fields["kinds"] = .strings(kinds) }
            return fields
        }
    }

    /// `Event`: one event of the `Events` stream or of `EventHistory`.
    public struct Event: ProtocolMessage {
        /// Increases with each event proctord records, in the order it received them.
        public var id: Int
        public var kind: String
        public var appId: String?
        public var data: [String: JSONValue]
        /// When it happened (for an app's report, the time the app gave).
        public var occurredAt: String
        /// When proctord received or produced it; also sent as `at`, for older clients.
        public var receivedAt: String

        public init(id: Int, kind: String, appId: String?, data: [String: JSONValue], occurredAt: String, receivedAt: String) {
            self.id = id
            self.kind = kind
            self.appId = appId
            self.data = data
            self.occurredAt = occurredAt
            self.receivedAt = receivedAt
        }

        public init(reading message: MessageReader) throws(MalformedMessage) {
            id = try message.int("id")
            kind = try message.string("kind")
            appId = try message.optionalString("appId")
            data = try message.object("data")
            occurredAt = try message.string("occurredAt")
            receivedAt = try message.string("receivedAt")
        }

        public var fields: [String: JSONValue] {
            var fields: [String: JSONValue] = ["id": .number(id), "kind": .string(kind), "data": .object(data),
                                               "occurredAt": .string(occurredAt), "receivedAt": .string(receivedAt),
                                               "at": .string(receivedAt)]
            if let appId { fields["appId"] = .string(appId) }
            return fields
        }
    }
}
