public import JSONCore

/// A policy document of schema 1 (docs/engine.md), after parsing and validation.
///
/// Every setting is optional at this level: a missing setting falls back from the app to
/// `defaults`, then to the built-in default (see `BuiltinDefaults`). Keeping "not said"
/// distinct from "said" is what lets drop-in files merge key by key and lets every decision
/// name the JSON path that made it.
public struct Policy: Sendable, Hashable {
    /// The only schema this build understands.
    public static let supportedSchema = 1

    /// The administrator's name for this policy (`"2026-11-29.1"`); opaque, compared for equality.
    public var version: String
    public var defaults: AppSettings
    public var apps: [AppID: AppPolicy]

    public init(version: String, defaults: AppSettings = AppSettings(), apps: [AppID: AppPolicy] = [:]) {
        self.version = version
        self.defaults = defaults
        self.apps = apps
    }
}

/// A reverse-DNS application id, `[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+`.
public typealias AppID = String

/// Whether an app may run and handle data at all.
public enum AppState: String, Sendable, Hashable, CaseIterable, Codable {
    case authorized, blocked, retired
}

/// One app's entry under `apps`.
public struct AppPolicy: Sendable, Hashable {
    public var state: AppState
    /// Who may register as this app; nil means nobody can (the daemon refuses every caller).
    public var match: MatchRule?
    /// Managed configuration handed to the app as is.
    public var config: [String: JSONValue]
    public var settings: AppSettings

    public init(state: AppState = .authorized, match: MatchRule? = nil,
                config: [String: JSONValue] = [:], settings: AppSettings = AppSettings()) {
        self.state = state
        self.match = match
        self.config = config
        self.settings = settings
    }
}

/// Which processes may claim an app id: the resolved executable path and the user names
/// (`"*"` for any user). A missing field does not restrict.
public struct MatchRule: Sendable, Hashable {
    public var executable: String?
    public var users: [String]?

    public init(executable: String? = nil, users: [String]? = nil) {
        self.executable = executable
        self.users = users
    }
}

/// The settings that may appear both under `defaults` and in an app entry.
public struct AppSettings: Sendable, Hashable {
    public var dlp: DLPSettings
    public var compliance: ComplianceSettings

    public init(dlp: DLPSettings = DLPSettings(), compliance: ComplianceSettings = ComplianceSettings()) {
        self.dlp = dlp
        self.compliance = compliance
    }
}

/// `dlp`: what data may leave or enter the app.
public struct DLPSettings: Sendable, Hashable {
    public var clipboardLevel: ClipboardLevel?   // dlp.clipboard.level
    public var clipboardCharLimit: Int?          // dlp.clipboard.charLimit, >= 0; 0 means no allowance
    public var shareSend: ShareLevel?            // dlp.share.send
    public var shareReceive: ShareLevel?         // dlp.share.receive
    public var shareExempt: [String]?            // dlp.share.exempt: app-id globs, `*` any run of characters
    public var print: Toggle?                    // dlp.print
    public var screenCapture: Toggle?            // dlp.screenCapture
    public var fileExportAllow: [String]?        // dlp.fileExport.allow: absolute path globs
    public var fileExportDeny: [String]?         // dlp.fileExport.deny
    public var fileExportEnforcement: ExportEnforcement? // dlp.fileExport.enforcement
    public var notifications: NotificationLevel? // dlp.notifications

    public init(clipboardLevel: ClipboardLevel? = nil, clipboardCharLimit: Int? = nil,
                shareSend: ShareLevel? = nil, shareReceive: ShareLevel? = nil, shareExempt: [String]? = nil,
                print: Toggle? = nil, screenCapture: Toggle? = nil,
                fileExportAllow: [String]? = nil, fileExportDeny: [String]? = nil,
                fileExportEnforcement: ExportEnforcement? = nil, notifications: NotificationLevel? = nil) {
        self.clipboardLevel = clipboardLevel
        self.clipboardCharLimit = clipboardCharLimit
        self.shareSend = shareSend
        self.shareReceive = shareReceive
        self.shareExempt = shareExempt
        self.print = print
        self.screenCapture = screenCapture
        self.fileExportAllow = fileExportAllow
        self.fileExportDeny = fileExportDeny
        self.fileExportEnforcement = fileExportEnforcement
        self.notifications = notifications
    }
}

/// `compliance`: conditions on the app itself.
public struct ComplianceSettings: Sendable, Hashable {
    public var minVersion: SemanticVersion?  // compliance.minVersion
    public var onViolation: Violation?       // compliance.onViolation
    public var offlineGraceSeconds: Int?     // compliance.offlineGraceSeconds, >= 0
    public var offlineWipeSeconds: Int?      // compliance.offlineWipeSeconds, > 0 (and > offlineGraceSeconds beside it)

    public init(minVersion: SemanticVersion? = nil, onViolation: Violation? = nil, offlineGraceSeconds: Int? = nil,
                offlineWipeSeconds: Int? = nil) {
        self.minVersion = minVersion
        self.onViolation = onViolation
        self.offlineGraceSeconds = offlineGraceSeconds
        self.offlineWipeSeconds = offlineWipeSeconds
    }
}

/// Intune's clipboard levels: `blocked` (nothing in or out), `managed` (to and from managed
/// apps), `managed-paste-in` (copy to managed apps, paste from any), `any`.
public enum ClipboardLevel: String, Sendable, Hashable, CaseIterable {
    case blocked, managed, managedPasteIn = "managed-paste-in", any
}

/// Share levels: `none`, `managed` (managed apps and exempt ids only), `any`.
public enum ShareLevel: String, Sendable, Hashable, CaseIterable {
    case none, managed, any
}

public enum Toggle: String, Sendable, Hashable, CaseIterable {
    case allow, block
}

/// `dlp.notifications`: `allow`, `block-org-data` (only notifications that show no
/// organisation data), `block` (none).
public enum NotificationLevel: String, Sendable, Hashable, CaseIterable {
    case allow, blockOrgData = "block-org-data", block
}

/// `dlp.fileExport.enforcement`: who enforces the export rule. `advisory`: the app asks
/// `DataGuard` before it writes; `kernel`: the SDK also confines the app's writes with Landlock
/// to its data directories and the directories of the allow list (docs/sdk.md).
public enum ExportEnforcement: String, Sendable, Hashable, CaseIterable {
    case advisory, kernel
}

/// What happens when an app's version is below `compliance.minVersion`.
public enum Violation: String, Sendable, Hashable, CaseIterable, Codable {
    case block, warn, wipe
}

/// The data actions and the launch check that `Decide` answers.
public enum Action: String, Sendable, Hashable, CaseIterable, Codable {
    case launch
    case clipboardCopy = "clipboard.copy"
    case clipboardPaste = "clipboard.paste"
    case shareSend = "share.send"
    case shareReceive = "share.receive"
    case print
    case screenCapture = "screen-capture"
    case fileExport = "file.export"
    /// Showing a notification; the target says what it shows (`NotificationContent`).
    case notification
}

/// The target of a `notification` request: what the notification would show.
public enum NotificationContent: String, Sendable, Hashable, CaseIterable {
    /// It shows organisation data (a message's sender and text, a document's title).
    case org
    /// It shows nothing of the organisation's ("1 new message").
    case plain
}
