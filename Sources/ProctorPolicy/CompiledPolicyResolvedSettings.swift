import JSONCore

/// The settings a decision reads of an app, resolved to their values, with the layer that
/// supplied each (`layer(of:)`): the deciding rule follows from the layer, the setting and the
/// asking app's id, so no rule text is kept. 36 bytes, kept in the app's slot of the
/// `AppTable` beside its id, so that a decision reads one cache line of the app.
struct DecisionSettings: Sendable {
    var clipboardCharLimit: Int
    /// Into `CompiledTables.appIDGlobLists`.
    var shareExempt: Int32
    /// Into `CompiledTables.pathGlobLists`; -1 when no layer has an allow list.
    var fileExportAllow: Int32
    var fileExportDeny: Int32
    /// Into `CompiledTables.versions`; -1 for no minimum.
    var minVersion: Int32
    /// Two bits per `RuleSetting`: its `RuleLayer` (read and set through `layer(of:)`).
    var layers: UInt32 = 0
    var clipboardLevel: ClipboardLevel
    var shareSend: ShareLevel
    var shareReceive: ShareLevel
    var print: Toggle
    var screenCapture: Toggle
    var notifications: NotificationLevel
    var onViolation: Violation
    /// Like `OfflineSeconds.wipe`, only sent to the app (never a deciding rule), so its layer
    /// is not kept.
    var fileExportEnforcement: ExportEnforcement

    /// The layer that supplied `setting` (every setting starts `builtin`).
    func layer(of setting: RuleSetting) -> RuleLayer {
        RuleLayer(rawValue: UInt8(truncatingIfNeeded: layers >> (2 * UInt32(setting.rawValue))) & 3)!
    }

    mutating func setLayer(_ layer: RuleLayer, of setting: RuleSetting) {
        let shift = 2 * UInt32(setting.rawValue)
        layers = layers & ~(3 << shift) | UInt32(layer.rawValue) << shift
    }
}

/// The offline limits of an app, which no decision reads: kept apart from `DecisionSettings`
/// (in `CompiledPolicyStorage.offline`), so that those fit in the app's slot.
struct OfflineSeconds: Sendable {
    var grace: Int
    /// -1 for never.
    var wipe: Int
}

/// Every DLP and compliance setting of an app resolved to its value: what compiling works
/// out, and `appPolicy` and `effectiveRules` give back. The layer of the offline grace is kept
/// in `decision`'s layers with the others.
struct ResolvedSettings: Sendable {
    var decision: DecisionSettings
    var offline: OfflineSeconds
}

/// One app of the policy, compiled.
struct AppRecord: Sendable {
    var settings: ResolvedSettings
    var state: AppState
}

/// The tables a compiled policy decides from, filled while compiling. Identical glob lists
/// and versions are stored once and shared by every app that has them.
struct CompiledTables: Sendable {
    var appIDGlobLists: [GlobList] = []
    var pathGlobLists: [[PathGlob]] = []
    var versions: [SemanticVersion] = []
    /// The numbers of each of `versions`, for `version(_:meets:)`.
    var versionNumbers: [(major: Int, minor: Int, patch: Int)] = []
    private var appIDGlobListPositions: [[String]: Int32] = [:]
    /// Keyed by bytes: paths are bytes to the kernel and `PathGlob`, and `String`'s `==` would
    /// take a list for another that spells a name in another Unicode normalisation.
    private var pathGlobListPositions: [[ByteExactString]: Int32] = [:]
    /// Keyed by every field, not by precedence (which ignores build metadata), so that the
    /// version an app said is the one `CompiledPolicy.appPolicy` gives back.
    private var versionPositions: [ExactVersion: Int32] = [:]

    private struct ExactVersion: Hashable {
        let major: Int, minor: Int, patch: Int
        let preRelease: [String], build: [String]

        init(_ version: SemanticVersion) {
            (major, minor, patch) = (version.major, version.minor, version.patch)
            (preRelease, build) = (version.preRelease, version.build)
        }
    }

    private mutating func appIDGlobList(_ patterns: [String]) -> Int32 {
        if let position = appIDGlobListPositions[patterns] { return position }
        appIDGlobLists.append(GlobList(patterns))
        let position = Int32(appIDGlobLists.count - 1)
        appIDGlobListPositions[patterns] = position
        return position
    }

    private mutating func pathGlobList(_ patterns: [String]) -> Int32 {
        let key = patterns.map(ByteExactString.init)
        if let position = pathGlobListPositions[key] { return position }
        pathGlobLists.append(patterns.map(PathGlob.init))
        let position = Int32(pathGlobLists.count - 1)
        pathGlobListPositions[key] = position
        return position
    }

    /// The built-in defaults of `BuiltinDefaults`.
    mutating func builtinSettings() -> ResolvedSettings {
        let decision = DecisionSettings(
            clipboardCharLimit: BuiltinDefaults.clipboardCharLimit,
            shareExempt: appIDGlobList(BuiltinDefaults.shareExempt),
            fileExportAllow: BuiltinDefaults.fileExportAllow.map { pathGlobList($0) } ?? -1,
            fileExportDeny: pathGlobList(BuiltinDefaults.fileExportDeny),
            minVersion: BuiltinDefaults.minVersion.map { version($0) } ?? -1,
            clipboardLevel: BuiltinDefaults.clipboardLevel, shareSend: BuiltinDefaults.shareSend,
            shareReceive: BuiltinDefaults.shareReceive, print: BuiltinDefaults.print,
            screenCapture: BuiltinDefaults.screenCapture, notifications: BuiltinDefaults.notifications,
            onViolation: BuiltinDefaults.onViolation, fileExportEnforcement: BuiltinDefaults.fileExportEnforcement)
        return ResolvedSettings(decision: decision, offline: OfflineSeconds(grace: BuiltinDefaults.offlineGraceSeconds,
                                                                            wipe: BuiltinDefaults.offlineWipeSeconds ?? -1))
    }

    /// Whether `version` is at least `versions[index]`: by the numbers alone where they
    /// differ, read without copying the minimum (a retain and release of each of its lists),
    /// and by precedence, pre-release identifiers included, where they are equal.
    func version(_ version: SemanticVersion, meets index: Int) -> Bool {
        let numbers = (version.major, version.minor, version.patch), minimum = versionNumbers[index]
        guard numbers == minimum else { return numbers > minimum }
        return version >= versions[index]
    }

    /// Identical minimums are stored once, so the few versions a policy names stay in cache.
    private mutating func version(_ version: SemanticVersion) -> Int32 {
        let key = ExactVersion(version)
        if let position = versionPositions[key] { return position }
        versions.append(version)
        versionNumbers.append((version.major, version.minor, version.patch))
        let position = Int32(versions.count - 1)
        versionPositions[key] = position
        return position
    }

    /// `settings`, of `layer` (`defaults` or an app entry), laid over `base`: what the layer
    /// does not say keeps the value and layer of the one below.
    mutating func overlay(_ settings: AppSettings, layer: RuleLayer, over base: ResolvedSettings) -> ResolvedSettings {
        let dlp = settings.dlp
        let compliance = settings.compliance
        var resolved = base.decision, offline = base.offline
        // Direct stores rather than key paths: this runs for every app at every compile.
        if let value = dlp.clipboardLevel { resolved.clipboardLevel = value; resolved.setLayer(layer, of: .clipboardLevel) }
        if let value = dlp.clipboardCharLimit { resolved.clipboardCharLimit = value; resolved.setLayer(layer, of: .clipboardCharLimit) }
        if let value = dlp.shareSend { resolved.shareSend = value; resolved.setLayer(layer, of: .shareSend) }
        if let value = dlp.shareReceive { resolved.shareReceive = value; resolved.setLayer(layer, of: .shareReceive) }
        if let value = dlp.shareExempt { resolved.shareExempt = appIDGlobList(value); resolved.setLayer(layer, of: .shareExempt) }
        if let value = dlp.print { resolved.print = value; resolved.setLayer(layer, of: .print) }
        if let value = dlp.screenCapture { resolved.screenCapture = value; resolved.setLayer(layer, of: .screenCapture) }
        if let value = dlp.fileExportAllow { resolved.fileExportAllow = pathGlobList(value); resolved.setLayer(layer, of: .fileExportAllow) }
        if let value = dlp.fileExportDeny { resolved.fileExportDeny = pathGlobList(value); resolved.setLayer(layer, of: .fileExportDeny) }
        if let value = dlp.notifications { resolved.notifications = value; resolved.setLayer(layer, of: .notifications) }
        if let value = compliance.minVersion { resolved.minVersion = version(value); resolved.setLayer(layer, of: .minVersion) }
        if let value = compliance.onViolation { resolved.onViolation = value; resolved.setLayer(layer, of: .onViolation) }
        if let value = compliance.offlineGraceSeconds { offline.grace = value; resolved.setLayer(layer, of: .offlineGraceSeconds) }
        if let value = compliance.offlineWipeSeconds { offline.wipe = value }
        if let value = dlp.fileExportEnforcement { resolved.fileExportEnforcement = value }
        return ResolvedSettings(decision: resolved, offline: offline)
    }
}
