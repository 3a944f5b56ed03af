import SystemdKit

/// Every kind of event proctord logs. Each kind has a fixed `MESSAGE_ID` (explained in
/// `systemd/proctor.catalog`, so `journalctl -x` can describe it) and a fixed priority.
/// The ids never change once released: admins filter on them (`journalctl MESSAGE_ID=…`).
enum DaemonEvent: Int, CaseIterable {
    case started
    case ready
    case reloadSucceeded
    case reloadFailed
    case policyApplied
    case appRegistered
    case registrationRefusedIdentity
    case registrationRefusedUnknown
    case decisionDenied
    case decisionAllowed
    case wipeIssued
    case wipeAcknowledged
    case clientLimitHit
    case refusalsSuppressed
    case denialsSuppressed
    case logMessagesDropped
    case eventsDropped
    case stopping
    case storageFailure
    /// A storage failure that was logged once for its episode is over.
    case storageRecovered
    case stateDatabaseCorrupt
    case notifyFailed
    case bundleApplied
    case bundleRefused
    case bundleFetchFailed
    case fleetConfigurationInvalid
    case statusReportFailed
    case machineKeyLoaded
    case dataKeysDestroyed
    case dataKeyRefused
    case policySnapshotIgnored

    /// The kind's id, parsed from its literal once per kind: parsing the 32 digits cost a
    /// denied `Decide` ≈ 700 instructions on the event loop.
    var messageID: MessageID { Self.messageIDs[rawValue] }

    /// `literalMessageID` of every kind, indexed by `rawValue` (the kinds' order).
    private static let messageIDs = allCases.map(\.literalMessageID)

    private var literalMessageID: MessageID {
        switch self {
        case .started: MessageID("2b816ded08dc4dfaaeb7cf279a51e3eb")
        case .ready: MessageID("f3335cbfd2a549648e5fa4e3d322b0ca")
        case .reloadSucceeded: MessageID("0987ce39a1a04b68b12e42a0a603b261")
        case .reloadFailed: MessageID("cbf4e86b6aef4ae2a86ff72eb1c7ee15")
        case .policyApplied: MessageID("e58574f526374efdac3b0277702c789a")
        case .appRegistered: MessageID("af576a13fab8475eab3b3f4cc9b613fa")
        case .registrationRefusedIdentity: MessageID("e3fb668b2e9745efb6ca333fc0a56b57")
        case .registrationRefusedUnknown: MessageID("9b7ef0817483435382c26af4489604d8")
        case .decisionDenied: MessageID("b1a2f28f21824eeaa03407dabfd373a4")
        case .decisionAllowed: MessageID("60dc09d9bd6d456099ca199dca597606")
        case .wipeIssued: MessageID("981bb5fa70264c4fbea3b9063b64cd71")
        case .wipeAcknowledged: MessageID("cf2cd627c1204c1bbd8786a9e3e48459")
        case .clientLimitHit: MessageID("4078c40fa02a4bbfb40469911ae603d1")
        case .refusalsSuppressed: MessageID("703de64d2c5b41a882b016090d044b2d")
        case .denialsSuppressed: MessageID("173b6ce832f848fdae6540f8bd794ef7")
        case .logMessagesDropped: MessageID("9821e4c6e36d418e98e4f9d4d11f6aa9")
        case .eventsDropped: MessageID("a2dd9c5b512b4cc2907f9d3c8f2b1bfb")
        case .stopping: MessageID("a57820dc9c044392a287fe9f65144e6f")
        case .storageFailure: MessageID("931641eee5d6428d9b294d4fb6b7c16d")
        case .storageRecovered: MessageID("1cbf8c513ab84e7f92a94320fba107aa")
        case .stateDatabaseCorrupt: MessageID("a5a9416875de497a85b9dc282e4cd38e")
        case .notifyFailed: MessageID("a450b17dadf2475c9dc0b474514a058e")
        case .bundleApplied: MessageID("23b6f853a8374caea1d30280f2c14894")
        case .bundleRefused: MessageID("0931caa75bc24621b966c4771a171f03")
        case .bundleFetchFailed: MessageID("d3c51b27058c4cd6836ac7de3b81da61")
        case .fleetConfigurationInvalid: MessageID("e96634bfb1264591b49523a2c38fb11a")
        case .statusReportFailed: MessageID("8ab1911d379e4fbd812e3bf007297631")
        case .machineKeyLoaded: MessageID("5d0c3f0a8e3b4f2c9a71d6b2e4f08c13")
        case .dataKeysDestroyed: MessageID("c7e2a9146b0d4e58a3f1b2d9e6c40a77")
        case .dataKeyRefused: MessageID("1f9b7d3e2c6a4b08b5e4d7a2c9f13e60")
        case .policySnapshotIgnored: MessageID("7caa0631e75742e68a0be03e79b2ea19")
        }
    }

    /// Denials, refusals and failures are always logged; allowed decisions only at debug
    /// level, so a busy machine's journal is not flooded by routine answers.
    var priority: LogPriority {
        switch self {
        case .started, .ready, .stopping, .dataKeysDestroyed, .storageRecovered: .notice
        case .reloadSucceeded, .policyApplied, .appRegistered, .wipeAcknowledged, .bundleApplied, .machineKeyLoaded: .info
        case .wipeIssued: .notice
        case .registrationRefusedIdentity, .registrationRefusedUnknown, .decisionDenied,
             .clientLimitHit, .refusalsSuppressed, .denialsSuppressed, .logMessagesDropped, .eventsDropped, .notifyFailed,
             .bundleFetchFailed,
             .statusReportFailed, .dataKeyRefused, .policySnapshotIgnored: .warning
        case .reloadFailed, .storageFailure, .bundleRefused, .fleetConfigurationInvalid: .error
        case .stateDatabaseCorrupt: .critical
        case .decisionAllowed: .debug
        }
    }

    /// An event of this kind with its id and priority, ready for `Logger.log`.
    func event(_ message: String, _ fields: [(String, String)] = []) -> LogEvent {
        LogEvent(messageID, priority, message, fields: fields)
    }
}

/// The journal field names proctord's events carry (`journalctl APP_ID=com.example.notes`).
enum DaemonEventField {
    static let appID = "APP_ID"
    static let session = "SESSION"
    static let peerPID = "PEER_PID"
    static let peerUID = "PEER_UID"
    static let peerExecutable = "PEER_EXE"
    static let policyVersion = "POLICY_VERSION"
    static let policySHA256 = "POLICY_SHA256"
    static let action = "ACTION"
    static let target = "TARGET"
    static let decision = "DECISION"
    static let rule = "RULE"
    /// How many refusals or denials of one uid went unlogged (`refusalsSuppressed`, `denialsSuppressed`).
    static let suppressed = "SUPPRESSED"
    /// The problems of a rejected policy, one per line.
    static let errors = "ERRORS"
    /// A signed bundle's serial, signing key, and where it came from (its URL, or `admin`).
    static let bundleSerial = "BUNDLE_SERIAL"
    static let bundleKeyID = "BUNDLE_KEY_ID"
    static let bundleSource = "BUNDLE_SOURCE"
    /// Why a bundle was refused or a fetch failed: a stable name (`rollback`, `timed-out`, …).
    static let reason = "REASON"
}
