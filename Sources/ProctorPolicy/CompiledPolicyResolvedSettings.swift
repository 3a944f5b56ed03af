/// A setting's value together with the rule that supplied it: the JSON path of the app entry
/// or `defaults` that set it, or the `builtin.<name>` of its built-in default.
struct Resolved<Value: Sendable>: Sendable {
    let value: Value
    let rule: String
}

/// A list of path globs with the rule of the list and of each entry
/// (`apps["x"].dlp.fileExport.deny` and `…deny[2]`).
struct ResolvedPathGlobs: Sendable {
    let globs: [PathGlob]
    let rule: String
    let entryRules: [String]

    init(_ patterns: [String], rule: String, entryRules: [String]) {
        globs = patterns.map(PathGlob.init)
        self.rule = rule
        self.entryRules = entryRules
    }

    /// The rule of the first glob that matches the resolved path, or nil.
    func firstMatch(_ bytes: UnsafeBufferPointer<UInt8>, _ segments: UnsafeBufferPointer<PathSegment>) -> String? {
        for index in globs.indices where globs[index].matches(bytes, segments) { return entryRules[index] }
        return nil
    }
}

/// The exempt app-id globs of `dlp.share.exempt`, with the rule of each entry.
struct ResolvedGlobList: Sendable {
    let list: GlobList
    let rule: String
    let entryRules: [String]
}

/// Every setting of DLP and compliance resolved to a value and its deciding rule.
///
/// Built in layers: the built-in defaults, overlaid by `defaults`, overlaid by each app's
/// entry. A layer that does not say a setting shares the layer below's value and rule
/// string, so an app that only changes one thing costs one new rule string.
struct ResolvedSettings: Sendable {
    let clipboardLevel: Resolved<ClipboardLevel>
    let clipboardCharLimit: Resolved<Int>
    let shareSend: Resolved<ShareLevel>
    let shareReceive: Resolved<ShareLevel>
    let shareExempt: ResolvedGlobList
    let print: Resolved<Toggle>
    let screenCapture: Resolved<Toggle>
    /// Nil when no layer has an allow list.
    let fileExportAllow: ResolvedPathGlobs?
    let fileExportDeny: ResolvedPathGlobs
    let notifications: Resolved<NotificationLevel>
    let minVersion: Resolved<SemanticVersion?>
    let onViolation: Resolved<Violation>
    let offlineGraceSeconds: Resolved<Int>

    /// The built-in defaults of `BuiltinDefaults`.
    static let builtin: ResolvedSettings = {
        typealias Rule = BuiltinDefaults.Rule
        return ResolvedSettings(
            clipboardLevel: Resolved(value: BuiltinDefaults.clipboardLevel, rule: Rule.clipboardLevel),
            clipboardCharLimit: Resolved(value: BuiltinDefaults.clipboardCharLimit, rule: Rule.clipboardCharLimit),
            shareSend: Resolved(value: BuiltinDefaults.shareSend, rule: Rule.shareSend),
            shareReceive: Resolved(value: BuiltinDefaults.shareReceive, rule: Rule.shareReceive),
            shareExempt: ResolvedGlobList(list: GlobList(BuiltinDefaults.shareExempt), rule: Rule.shareExempt,
                                          entryRules: BuiltinDefaults.shareExempt.map { _ in Rule.shareExempt }),
            print: Resolved(value: BuiltinDefaults.print, rule: Rule.print),
            screenCapture: Resolved(value: BuiltinDefaults.screenCapture, rule: Rule.screenCapture),
            fileExportAllow: BuiltinDefaults.fileExportAllow.map {
                ResolvedPathGlobs($0, rule: Rule.fileExportAllow, entryRules: $0.map { _ in Rule.fileExportAllow })
            },
            fileExportDeny: ResolvedPathGlobs(BuiltinDefaults.fileExportDeny, rule: Rule.fileExportDeny,
                                              entryRules: BuiltinDefaults.fileExportDeny.map { _ in Rule.fileExportDeny }),
            notifications: Resolved(value: BuiltinDefaults.notifications, rule: Rule.notifications),
            minVersion: Resolved(value: BuiltinDefaults.minVersion, rule: Rule.minVersion),
            onViolation: Resolved(value: BuiltinDefaults.onViolation, rule: Rule.onViolation),
            offlineGraceSeconds: Resolved(value: BuiltinDefaults.offlineGraceSeconds, rule: Rule.offlineGraceSeconds))
    }()

    private init(clipboardLevel: Resolved<ClipboardLevel>, clipboardCharLimit: Resolved<Int>,
                 shareSend: Resolved<ShareLevel>, shareReceive: Resolved<ShareLevel>, shareExempt: ResolvedGlobList,
                 print: Resolved<Toggle>, screenCapture: Resolved<Toggle>,
                 fileExportAllow: ResolvedPathGlobs?, fileExportDeny: ResolvedPathGlobs,
                 notifications: Resolved<NotificationLevel>, minVersion: Resolved<SemanticVersion?>,
                 onViolation: Resolved<Violation>, offlineGraceSeconds: Resolved<Int>) {
        self.clipboardLevel = clipboardLevel
        self.clipboardCharLimit = clipboardCharLimit
        self.shareSend = shareSend
        self.shareReceive = shareReceive
        self.shareExempt = shareExempt
        self.print = print
        self.screenCapture = screenCapture
        self.fileExportAllow = fileExportAllow
        self.fileExportDeny = fileExportDeny
        self.notifications = notifications
        self.minVersion = minVersion
        self.onViolation = onViolation
        self.offlineGraceSeconds = offlineGraceSeconds
    }

    /// `settings` (found at `path`, e.g. `defaults` or `apps["x"]`) laid over `base`.
    init(_ settings: AppSettings, at path: String, over base: ResolvedSettings) {
        let dlp = settings.dlp
        let compliance = settings.compliance
        func pick<Value>(_ value: Value?, _ suffix: String, _ below: Resolved<Value>) -> Resolved<Value> {
            guard let value else { return below }
            return Resolved(value: value, rule: path + suffix)
        }
        func rules(_ suffix: String, count: Int) -> [String] {
            (0..<count).map { "\(path)\(suffix)[\($0)]" }
        }
        clipboardLevel = pick(dlp.clipboardLevel, ".dlp.clipboard.level", base.clipboardLevel)
        clipboardCharLimit = pick(dlp.clipboardCharLimit, ".dlp.clipboard.charLimit", base.clipboardCharLimit)
        shareSend = pick(dlp.shareSend, ".dlp.share.send", base.shareSend)
        shareReceive = pick(dlp.shareReceive, ".dlp.share.receive", base.shareReceive)
        if let exempt = dlp.shareExempt {
            shareExempt = ResolvedGlobList(list: GlobList(exempt), rule: path + ".dlp.share.exempt",
                                           entryRules: rules(".dlp.share.exempt", count: exempt.count))
        } else {
            shareExempt = base.shareExempt
        }
        print = pick(dlp.print, ".dlp.print", base.print)
        screenCapture = pick(dlp.screenCapture, ".dlp.screenCapture", base.screenCapture)
        if let allow = dlp.fileExportAllow {
            fileExportAllow = ResolvedPathGlobs(allow, rule: path + ".dlp.fileExport.allow",
                                                entryRules: rules(".dlp.fileExport.allow", count: allow.count))
        } else {
            fileExportAllow = base.fileExportAllow
        }
        if let deny = dlp.fileExportDeny {
            fileExportDeny = ResolvedPathGlobs(deny, rule: path + ".dlp.fileExport.deny",
                                               entryRules: rules(".dlp.fileExport.deny", count: deny.count))
        } else {
            fileExportDeny = base.fileExportDeny
        }
        notifications = pick(dlp.notifications, ".dlp.notifications", base.notifications)
        minVersion = compliance.minVersion.map { Resolved(value: $0, rule: path + ".compliance.minVersion") } ?? base.minVersion
        onViolation = pick(compliance.onViolation, ".compliance.onViolation", base.onViolation)
        offlineGraceSeconds = pick(compliance.offlineGraceSeconds, ".compliance.offlineGraceSeconds", base.offlineGraceSeconds)
    }
}
