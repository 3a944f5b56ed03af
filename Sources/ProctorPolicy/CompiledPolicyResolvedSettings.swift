/// A position in `CompiledTables.rules`, the rule strings of list entries.
typealias RuleID = Int32

/// A setting's value and the rule that supplied it: the JSON path of the app entry or
/// `defaults` that set it, or the `builtin.<name>` of its built-in default. The rule sits
/// beside the value so a decision reads one cache line for both.
struct Resolved<Value: Sendable>: Sendable {
    var value: Value
    var rule: String
}

/// A list setting: the position of the compiled list in one of the list tables (-1 for
/// "no list"), the rule of the list, and where the rules of its entries start in the rule
/// table (entry `i` is `entryRules + i`).
struct ResolvedList: Sendable {
    var list: Int32
    var entryRules: RuleID
    var rule: String

    func entryRule(_ index: Int) -> RuleID { entryRules + RuleID(index) }
}

/// Every DLP and compliance setting resolved to a value and its deciding rule.
struct ResolvedSettings: Sendable {
    var clipboardLevel: Resolved<ClipboardLevel>
    var clipboardCharLimit: Resolved<Int>
    var shareSend: Resolved<ShareLevel>
    var shareReceive: Resolved<ShareLevel>
    /// Into `CompiledTables.appIDGlobLists`.
    var shareExempt: ResolvedList
    var print: Resolved<Toggle>
    var screenCapture: Resolved<Toggle>
    /// Into `CompiledTables.pathGlobLists`; `list == -1` when no layer has an allow list.
    var fileExportAllow: ResolvedList
    var fileExportDeny: ResolvedList
    var fileExportEnforcement: Resolved<ExportEnforcement>
    var notifications: Resolved<NotificationLevel>
    /// Into `CompiledTables.versions`; -1 for no minimum.
    var minVersion: Resolved<Int32>
    var onViolation: Resolved<Violation>
    var offlineGraceSeconds: Resolved<Int>
    /// -1 for never.
    var offlineWipeSeconds: Resolved<Int>
}

/// One app of the policy, compiled.
struct AppRecord: Sendable {
    var state: AppState
    /// `apps["x"].state`
    var stateRule: String
    var settings: ResolvedSettings
}

/// The tables a compiled policy decides from, filled while compiling. Identical glob lists
/// and versions are stored once and shared by every app that has them.
struct CompiledTables: Sendable {
    /// The rules of list entries (`…dlp.share.exempt[0]`), each list's entries consecutive.
    var rules: [String] = []
    var appIDGlobLists: [GlobList] = []
    var pathGlobLists: [[PathGlob]] = []
    var versions: [SemanticVersion] = []
    private var appIDGlobListPositions: [[String]: Int32] = [:]
    private var pathGlobListPositions: [[String]: Int32] = [:]
    private var versionPositions: [SemanticVersion: Int32] = [:]

    private mutating func addRule(_ rule: String) -> RuleID {
        rules.append(rule)
        return RuleID(rules.count - 1)
    }

    /// A list's setting with the rules of its entries added to the rule table.
    private mutating func list(_ list: Int32, rule: String, count: Int, entry: (Int) -> String) -> ResolvedList {
        let first = RuleID(rules.count)
        for index in 0..<count { _ = addRule(entry(index)) }
        return ResolvedList(list: list, entryRules: first, rule: rule)
    }

    private mutating func appIDGlobList(_ patterns: [String]) -> Int32 {
        if let position = appIDGlobListPositions[patterns] { return position }
        appIDGlobLists.append(GlobList(patterns))
        let position = Int32(appIDGlobLists.count - 1)
        appIDGlobListPositions[patterns] = position
        return position
    }

    private mutating func pathGlobList(_ patterns: [String]) -> Int32 {
        if let position = pathGlobListPositions[patterns] { return position }
        pathGlobLists.append(patterns.map(PathGlob.init))
        let position = Int32(pathGlobLists.count - 1)
        pathGlobListPositions[patterns] = position
        return position
    }

    /// The built-in defaults of `BuiltinDefaults`.
    mutating func builtinSettings() -> ResolvedSettings {
        typealias Rule = BuiltinDefaults.Rule
        let exempt = BuiltinDefaults.shareExempt
        let deny = BuiltinDefaults.fileExportDeny
        let allow = BuiltinDefaults.fileExportAllow
        return ResolvedSettings(
            clipboardLevel: Resolved(value: BuiltinDefaults.clipboardLevel, rule: Rule.clipboardLevel),
            clipboardCharLimit: Resolved(value: BuiltinDefaults.clipboardCharLimit, rule: Rule.clipboardCharLimit),
            shareSend: Resolved(value: BuiltinDefaults.shareSend, rule: Rule.shareSend),
            shareReceive: Resolved(value: BuiltinDefaults.shareReceive, rule: Rule.shareReceive),
            shareExempt: list(appIDGlobList(exempt), rule: Rule.shareExempt, count: exempt.count) { _ in Rule.shareExempt },
            print: Resolved(value: BuiltinDefaults.print, rule: Rule.print),
            screenCapture: Resolved(value: BuiltinDefaults.screenCapture, rule: Rule.screenCapture),
            fileExportAllow: list(allow.map { pathGlobList($0) } ?? -1, rule: Rule.fileExportAllow,
                                  count: allow?.count ?? 0) { _ in Rule.fileExportAllow },
            fileExportDeny: list(pathGlobList(deny), rule: Rule.fileExportDeny, count: deny.count) { _ in Rule.fileExportDeny },
            fileExportEnforcement: Resolved(value: BuiltinDefaults.fileExportEnforcement, rule: Rule.fileExportEnforcement),
            notifications: Resolved(value: BuiltinDefaults.notifications, rule: Rule.notifications),
            minVersion: Resolved(value: BuiltinDefaults.minVersion.map { version($0) } ?? -1, rule: Rule.minVersion),
            onViolation: Resolved(value: BuiltinDefaults.onViolation, rule: Rule.onViolation),
            offlineGraceSeconds: Resolved(value: BuiltinDefaults.offlineGraceSeconds, rule: Rule.offlineGraceSeconds),
            offlineWipeSeconds: Resolved(value: BuiltinDefaults.offlineWipeSeconds ?? -1, rule: Rule.offlineWipeSeconds))
    }

    /// Identical minimums are stored once, so the few versions a policy names stay in cache.
    private mutating func version(_ version: SemanticVersion) -> Int32 {
        if let position = versionPositions[version] { return position }
        versions.append(version)
        let position = Int32(versions.count - 1)
        versionPositions[version] = position
        return position
    }

    /// `settings`, found at `path` (`defaults`, `apps["x"]`), laid over `base`: what the layer
    /// does not say keeps the value and rule of the layer below.
    mutating func overlay(_ settings: AppSettings, at path: String, over base: ResolvedSettings) -> ResolvedSettings {
        let dlp = settings.dlp
        let compliance = settings.compliance
        var resolved = base
        func pick<Value>(_ value: Value?, _ suffix: String, _ target: inout Resolved<Value>) {
            if let value { target = Resolved(value: value, rule: path + suffix) }
        }
        pick(dlp.clipboardLevel, ".dlp.clipboard.level", &resolved.clipboardLevel)
        pick(dlp.clipboardCharLimit, ".dlp.clipboard.charLimit", &resolved.clipboardCharLimit)
        pick(dlp.shareSend, ".dlp.share.send", &resolved.shareSend)
        pick(dlp.shareReceive, ".dlp.share.receive", &resolved.shareReceive)
        if let exempt = dlp.shareExempt {
            let listPath = path + ".dlp.share.exempt"
            resolved.shareExempt = list(appIDGlobList(exempt), rule: listPath, count: exempt.count) { "\(listPath)[\($0)]" }
        }
        pick(dlp.print, ".dlp.print", &resolved.print)
        pick(dlp.screenCapture, ".dlp.screenCapture", &resolved.screenCapture)
        if let allow = dlp.fileExportAllow {
            let listPath = path + ".dlp.fileExport.allow"
            resolved.fileExportAllow = list(pathGlobList(allow), rule: listPath, count: allow.count) { "\(listPath)[\($0)]" }
        }
        if let deny = dlp.fileExportDeny {
            let listPath = path + ".dlp.fileExport.deny"
            resolved.fileExportDeny = list(pathGlobList(deny), rule: listPath, count: deny.count) { "\(listPath)[\($0)]" }
        }
        pick(dlp.fileExportEnforcement, ".dlp.fileExport.enforcement", &resolved.fileExportEnforcement)
        pick(dlp.notifications, ".dlp.notifications", &resolved.notifications)
        if let minimum = compliance.minVersion {
            resolved.minVersion = Resolved(value: version(minimum), rule: path + ".compliance.minVersion")
        }
        pick(compliance.onViolation, ".compliance.onViolation", &resolved.onViolation)
        pick(compliance.offlineGraceSeconds, ".compliance.offlineGraceSeconds", &resolved.offlineGraceSeconds)
        pick(compliance.offlineWipeSeconds, ".compliance.offlineWipeSeconds", &resolved.offlineWipeSeconds)
        return resolved
    }
}
