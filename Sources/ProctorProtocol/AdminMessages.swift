public import JSONCore
public import ProctorPolicy

/// `io.proctor.Admin`: the methods administrators and MDM connectors call (proctorctl),
/// their parameters and replies. The contract is `Interfaces/io.proctor.Admin.varlink`; to
/// add a field, add it there and as a stored property to the one message type here that
/// carries it (and to its public init): its name is the field's (see `ProtocolMessage`).
/// Times are RFC 3339 strings in UTC, as on the wire.
/// A method of `io.proctor.Admin`; proctorctl calls only these (`AdminClient`).
public protocol AdminMethod: ProtocolMethod {}

extension AdminMethod {
    public static var interface: String { Admin.interface }
}

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
        /// The status documents POSTed to `StatusURL=`; nil when none is configured.
        public var statusReports: StatusDelivery?

        public init(bundleUrl: String?, requireSignedBundles: Bool, trustedKeys: [String], lastAppliedSerial: Int?,
                    lastAppliedAt: String?, lastFetchAt: String?, lastSuccessfulFetchAt: String?,
                    lastFetchResult: String?, nextFetchAt: String?, lastError: FleetError?,
                    fetchFailures: Int, bundlesRefused: Int, statusReports: StatusDelivery? = nil) {
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
            self.statusReports = statusReports
        }
    }

    /// `StatusDelivery`: how sending status documents to the MDM (`StatusURL=`) went.
    public struct StatusDelivery: ProtocolMessage {
        public var statusUrl: String
        /// When the last POST finished.
        public var lastReportAt: String?
        /// `sent` or `failed`.
        public var lastReportResult: String?
        /// The last POST that failed, kept after later successes (its `at` tells them apart).
        public var lastReportError: FleetError?
        /// Since proctord started.
        public var reportsSent: Int
        public var reportFailures: Int

        public init(statusUrl: String, lastReportAt: String?, lastReportResult: String?, lastReportError: FleetError?,
                    reportsSent: Int, reportFailures: Int) {
            self.statusUrl = statusUrl
            self.lastReportAt = lastReportAt
            self.lastReportResult = lastReportResult
            self.lastReportError = lastReportError
            self.reportsSent = reportsSent
            self.reportFailures = reportFailures
        }
    }

    /// `FleetError`: why the last bundle was refused, the last fetch failed or the last status report failed.
    public struct FleetError: ProtocolMessage {
        public var at: String
        public var reason: String
        public var message: String

        public init(at: String, reason: String, message: String) {
            self.at = at
            self.reason = reason
            self.message = message
        }
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
    }

    /// `RefusalCount`: refusals for one reason since proctord started.
    public struct RefusalCount: ProtocolMessage {
        public var reason: String
        public var count: Int

        public init(reason: String, count: Int) {
            self.reason = reason
            self.count = count
        }
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
    }

    /// `FileExportEnforcement`: who enforces a session's export rule — `kernel` (Landlock, at
    /// `landlockABI`) or `advisory` (the app asks DataGuard), with the SDK's `reason` for falling
    /// back — and when the SDK said so.
    public struct FileExportEnforcement: ProtocolMessage {
        public enum Mode: String, Sendable, CaseIterable, Codable { case kernel, advisory }

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
    }

    /// `LifecycleEvent`: the last lifecycle event an app reported.
    public struct LifecycleEvent: ProtocolMessage {
        public var at: String
        public var event: String

        public init(at: String, event: String) {
            self.at = at
            self.event = event
        }
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
    }

    /// `WipeRecord`: a wipe directive and how far it got.
    public struct WipeRecord: ProtocolMessage {
        public enum State: String, Sendable, CaseIterable, Codable { case issued, delivered, completed }

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
    }

    /// `PolicyAcknowledgement`: what the app said it did with a policy version.
    public struct PolicyAcknowledgement: ProtocolMessage {
        public enum Status: String, Sendable, CaseIterable, Codable { case applied, error, unsupported }

        public var policyVersion: String
        public var status: Status
        public var at: String

        public init(policyVersion: String, status: Status, at: String) {
            self.policyVersion = policyVersion
            self.status = status
            self.at = at
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
    }

    /// `ComplianceState`: whether the app's last registered version meets its compliance settings.
    public struct ComplianceState: ProtocolMessage {
        public var compliant: Bool
        public var reason: String

        public init(compliant: Bool, reason: String) {
            self.compliant = compliant
            self.reason = reason
        }
    }

    /// `HistoryEntry`: an applied policy kept for rollback.
    public struct HistoryEntry: ProtocolMessage {
        public enum Kind: String, Sendable, CaseIterable, Codable { case apply, rollback }

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
    }

    /// `EventFilter`: which events `Events` sends.
    public struct EventFilter: ProtocolMessage {
        public var appId: String?
        public var kinds: [String]?

        public init(appId: String? = nil, kinds: [String]? = nil) {
            self.appId = appId
            self.kinds = kinds
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
        /// When proctord received or produced it.
        public var receivedAt: String { didSet { at = receivedAt } }
        /// The same as `receivedAt`, for clients older than it.
        public private(set) var at: String

        public init(id: Int, kind: String, appId: String?, data: [String: JSONValue], occurredAt: String, receivedAt: String) {
            self.id = id
            self.kind = kind
            self.appId = appId
            self.data = data
            self.occurredAt = occurredAt
            self.receivedAt = receivedAt
            at = receivedAt
        }
    }
}
