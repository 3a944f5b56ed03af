import JSONCore

/// Which layer of a policy supplied a setting.
enum RuleLayer: UInt8, Sendable {
    case builtin = 0, defaults = 1, app = 2
}

/// A setting a decision can rest on; with a layer (and the asking app's id for the app layer)
/// it names the deciding rule, so a compiled policy stores no rule text per app.
enum RuleSetting: UInt8, Sendable, CaseIterable {
    case clipboardLevel, clipboardCharLimit, shareSend, shareReceive, shareExempt, print, screenCapture
    case fileExportAllow, fileExportDeny, notifications, minVersion, onViolation, offlineGraceSeconds
    /// `apps["x"].state`: always the app layer.
    case state

    /// The rule's path below its layer (`.dlp.clipboard.level`).
    var suffix: String {
        switch self {
        case .clipboardLevel: ".dlp.clipboard.level"
        case .clipboardCharLimit: ".dlp.clipboard.charLimit"
        case .shareSend: ".dlp.share.send"
        case .shareReceive: ".dlp.share.receive"
        case .shareExempt: ".dlp.share.exempt"
        case .print: ".dlp.print"
        case .screenCapture: ".dlp.screenCapture"
        case .fileExportAllow: ".dlp.fileExport.allow"
        case .fileExportDeny: ".dlp.fileExport.deny"
        case .notifications: ".dlp.notifications"
        case .minVersion: ".compliance.minVersion"
        case .onViolation: ".compliance.onViolation"
        case .offlineGraceSeconds: ".compliance.offlineGraceSeconds"
        case .state: ".state"
        }
    }

    /// The rule of the built-in default (`BuiltinDefaults.Rule`); a built-in list's entries
    /// share it.
    var builtinRule: String {
        typealias Rule = BuiltinDefaults.Rule
        return switch self {
        case .clipboardLevel: Rule.clipboardLevel
        case .clipboardCharLimit: Rule.clipboardCharLimit
        case .shareSend: Rule.shareSend
        case .shareReceive: Rule.shareReceive
        case .shareExempt: Rule.shareExempt
        case .print: Rule.print
        case .screenCapture: Rule.screenCapture
        case .fileExportAllow: Rule.fileExportAllow
        case .fileExportDeny: Rule.fileExportDeny
        case .notifications: Rule.notifications
        case .minVersion: Rule.minVersion
        case .onViolation: Rule.onViolation
        case .offlineGraceSeconds: Rule.offlineGraceSeconds
        case .state: Rule.unknownApp  // never used: a state always comes from the app entry
        }
    }
}

/// The rule a `Decision` names, kept in the parts a decision has at hand and rendered to
/// text only when read: building or retaining a per-app string while deciding would cost a
/// memory round trip (or an allocation) per decision.
enum DecisionRule: Sendable {
    /// Fixed text: a built-in rule, or what a caller gave `Decision.init`.
    case text(String)
    /// A setting of `defaults`, or entry `entry` of its list (`-1`: the setting itself).
    case defaults(RuleSetting, entry: Int32)
    /// A setting of the app entry `apps[app]`, or entry `entry` of its list.
    case app(AppID, RuleSetting, entry: Int32)

    /// The rule of `setting` supplied by `layer` for the asking `app`.
    init(_ layer: RuleLayer, _ setting: RuleSetting, entry: Int = -1, app: AppID) {
        switch layer {
        case .builtin: self = .text(setting.builtinRule)
        case .defaults: self = .defaults(setting, entry: Int32(entry))
        case .app: self = .app(app, setting, entry: Int32(entry))
        }
    }

    /// `apps["com.example.notes"].dlp.fileExport.deny[2]`, exactly as `JSONPath` renders it.
    var text: String {
        switch self {
        case .text(let text): text
        case .defaults(let setting, let entry): Self.joined("defaults", setting.suffix, Self.entrySuffix(entry), "")
        case .app(let app, let setting, let entry): Self.appRule(app, setting.suffix, Self.entrySuffix(entry))
        }
    }

    private static func entrySuffix(_ entry: Int32) -> String { entry < 0 ? "" : "[\(entry)]" }

    /// `JSONPath([.key("apps"), .key(app)]).description + suffix + entry` in one allocation: one pass
    /// over the id decides between `apps.notes` (an identifier) and `apps["com.x"]`; an id
    /// that needs JSON escapes takes `JSONPath`'s own route.
    static func appRule(_ app: AppID, _ suffix: String, _ entry: String) -> String {
        var app = app
        let (identifier, needsEscape) = app.withUTF8 { bytes in
            var identifier = bytes.first.map(isIdentifierStart) ?? false
            for byte in bytes {
                if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return (false, true) }
                if !isIdentifierStart(byte) && !(0x30...0x39).contains(byte) { identifier = false }
            }
            return (identifier, false)
        }
        if needsEscape { return JSONPath([.key("apps"), .key(app)]).description + suffix + entry }
        return identifier ? joined("apps.", app, suffix, entry) : joined("apps[\"", app, "\"]", suffix + entry)
    }

    /// The four parts in one allocation, copied as bytes (`+=` would check and grow per part).
    private static func joined(_ a: String, _ b: String, _ c: String, _ d: String) -> String {
        let count = a.utf8.count + b.utf8.count + c.utf8.count + d.utf8.count
        return String(unsafeUninitializedCapacity: count) { out in
            var written = out[...].initialize(fromContentsOf: a.utf8)
            written = out[written...].initialize(fromContentsOf: b.utf8)
            written = out[written...].initialize(fromContentsOf: c.utf8)
            return out[written...].initialize(fromContentsOf: d.utf8)
        }
    }

    private static func isIdentifierStart(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "_") || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }
}
