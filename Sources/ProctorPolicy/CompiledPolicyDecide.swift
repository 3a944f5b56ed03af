/// How the other app of a data action stands to the app that asks.
enum TargetStanding {
    /// The same app: data moves freely.
    case sameApp
    /// Named in policy with state `authorized`.
    case managed
    /// Anything else: not in policy, blocked, retired, or not given.
    case unmanaged
}

/// The settings of the app that asks, read in place in its table slot, and the key form of
/// its id (for naming app-layer rules).
struct AskingApp {
    let settings: UnsafePointer<DecisionSettings>
    let form: AppKeyForm

    /// The rule that supplied `setting`, or entry `entry` of its list.
    @inline(__always)
    func rule(_ setting: RuleSetting, entry: Int = -1) -> DecisionRule {
        DecisionRule(settings.pointee.layer(of: setting), setting, entry: entry, form: form)
    }
}

extension CompiledPolicyStorage {
    /// See `CompiledPolicy.decide`; `entry` is `table.find(id)`, `target` the target's UTF-8
    /// bytes: what the decision reads of it, so that the caller need not make a `String` of it.
    /// Inlined into its two callers (a request's lookup, a session's remembered place): called,
    /// the decision's arguments and result went through memory.
    @inline(__always)
    func decide(entry: AppTable.Entry?, _ action: Action, target: UnsafeBufferPointer<UInt8>?, size: Int?,
                appVersion: SemanticVersion?) -> EngineDecision {
        guard let entry else { return Self.unknownApp }
        // State and settings come from the app's table slot (one cache line, which the lookup
        // has read), in place, and the rule is named by layer and setting, the asking app's id
        // given when it is rendered: no per-app memory besides the slot, and no reference to
        // the id.
        guard entry.state == .authorized else {
            return EngineDecision(allowed: false, rule: .app(.state, entry: -1, form: entry.keyForm),
                            reason: entry.state == .blocked ? DecisionReason.blocked : DecisionReason.retired)
        }
        let settings = table.settings(at: entry.position)
        let app = AskingApp(settings: settings, form: entry.keyForm)
        switch action {
        case .launch:
            return decideLaunch(app, version: appVersion)
        case .clipboardCopy:
            return decideCopy(app, to: standing(of: target, toward: entry), size: size)
        case .clipboardPaste:
            return decidePaste(app, from: standing(of: target, toward: entry))
        case .shareSend:
            return decideShare(app, sending: true, other: target, standing(of: target, toward: entry))
        case .shareReceive:
            return decideShare(app, sending: false, other: target, standing(of: target, toward: entry))
        case .print:
            let print = settings.pointee.print
            return EngineDecision(allowed: print == .allow, rule: app.rule(.print), reason: DecisionReason.print(print))
        case .screenCapture:
            let capture = settings.pointee.screenCapture
            return EngineDecision(allowed: capture == .allow, rule: app.rule(.screenCapture),
                            reason: DecisionReason.screenCapture(capture))
        case .fileExport:
            return decideExport(app, path: target)
        case .notification:
            return decideNotification(app, showing: target)
        }
    }

    /// One lookup of the target: the asking app (`app`) is in the table, which holds each id
    /// once and compares bytes, so the target is the same app exactly when it is found at the
    /// same position. (By bytes, not `==`: "\u{212A}" (KELVIN SIGN) equals "K".)
    private func standing(of target: UnsafeBufferPointer<UInt8>?, toward app: AppTable.Entry) -> TargetStanding {
        guard let target, let other = table.find(utf8: target) else { return .unmanaged }
        if other.position == app.position { return .sameApp }
        return other.isManaged ? .managed : .unmanaged
    }

    private func decideLaunch(_ app: AskingApp, version: SemanticVersion?) -> EngineDecision {
        let minimum = app.settings.pointee.minVersion
        guard minimum >= 0 else {
            return EngineDecision(allowed: true, rule: .app(.state, entry: -1, form: app.form), reason: DecisionReason.authorized)
        }
        if let version, tables.version(version, meets: Int(minimum)) {
            return EngineDecision(allowed: true, rule: app.rule(.minVersion), reason: DecisionReason.versionMeetsMinimum)
        }
        let violation = app.settings.pointee.onViolation
        return EngineDecision(allowed: violation == .warn, rule: app.rule(.minVersion),
                        reason: DecisionReason.versionBelowMinimum(violation, versionKnown: version != nil),
                        violation: violation)
    }

    /// `charLimit` is an allowance on top of the level: a copy the level refuses still goes
    /// to any app when its size is known and at most the limit — under every level,
    /// `blocked` included, as docs/engine.md says (a charLimit applies "whatever the level").
    private func decideCopy(_ app: AskingApp, to target: TargetStanding, size: Int?) -> EngineDecision {
        if target == .sameApp { return Self.sameApp }
        let level = app.settings.pointee.clipboardLevel
        let targetManaged = target == .managed
        let allowed = switch level {
        case .any: true
        case .managed, .managedPasteIn: targetManaged
        case .blocked: false
        }
        let charLimit = app.settings.pointee.clipboardCharLimit
        if !allowed, charLimit > 0, let size, size >= 0, size <= charLimit {
            return EngineDecision(allowed: true, rule: app.rule(.clipboardCharLimit), reason: DecisionReason.clipboardCharLimit)
        }
        return EngineDecision(allowed: allowed, rule: app.rule(.clipboardLevel),
                        reason: DecisionReason.copy(level, targetManaged: targetManaged))
    }

    private func decidePaste(_ app: AskingApp, from source: TargetStanding) -> EngineDecision {
        if source == .sameApp { return Self.sameApp }
        let level = app.settings.pointee.clipboardLevel
        let sourceManaged = source == .managed
        let allowed = switch level {
        case .any, .managedPasteIn: true
        case .managed: sourceManaged
        case .blocked: false
        }
        return EngineDecision(allowed: allowed, rule: app.rule(.clipboardLevel),
                        reason: DecisionReason.paste(level, sourceManaged: sourceManaged))
    }

    /// `share.send` (`sending`) or `share.receive`; an exempt app counts like a managed one.
    private func decideShare(_ app: AskingApp, sending: Bool, other: UnsafeBufferPointer<UInt8>?,
                             _ standing: TargetStanding) -> EngineDecision {
        if standing == .sameApp { return Self.sameApp }
        let level = sending ? app.settings.pointee.shareSend : app.settings.pointee.shareReceive
        let otherManaged = standing == .managed
        if level == .managed, !otherManaged, let other {
            if let index = tables.appIDGlobLists[Int(app.settings.pointee.shareExempt)].firstMatch(other) {
                return EngineDecision(allowed: true, rule: app.rule(.shareExempt, entry: index),
                                reason: sending ? DecisionReason.exemptReceiver : DecisionReason.exemptSender)
            }
        }
        let allowed = level == .any || (level == .managed && otherManaged)
        return EngineDecision(allowed: allowed, rule: app.rule(sending ? .shareSend : .shareReceive),
                        reason: sending ? DecisionReason.send(level, receiverManaged: otherManaged)
                                        : DecisionReason.receive(level, senderManaged: otherManaged))
    }

    /// Deny patterns win over allow patterns; with an allow list only matching paths pass.
    private func decideExport(_ app: AskingApp, path bytes: UnsafeBufferPointer<UInt8>?) -> EngineDecision {
        guard let bytes else { return Self.exportPathMissing }
        guard bytes.count <= CompiledPolicy.maxExportPathBytes else { return Self.exportPathTooLong }
        return LexicalPath.withResolved(bytes) { path in
            if let index = firstMatch(app.settings.pointee.fileExportDeny, path) {
                return EngineDecision(allowed: false, rule: app.rule(.fileExportDeny, entry: index),
                                reason: DecisionReason.exportDenied)
            }
            let allow = app.settings.pointee.fileExportAllow
            guard allow >= 0 else {
                return EngineDecision(allowed: true, rule: app.rule(.fileExportAllow), reason: DecisionReason.exportNoAllowList)
            }
            if let index = firstMatch(allow, path) {
                return EngineDecision(allowed: true, rule: app.rule(.fileExportAllow, entry: index),
                                reason: DecisionReason.exportAllowed)
            }
            return EngineDecision(allowed: false, rule: app.rule(.fileExportAllow), reason: DecisionReason.exportNotAllowed)
        } ?? Self.exportPathRelative
    }

    /// `block-org-data` lets only `plain` notifications through. A target other than `org` or
    /// `plain` is denied under every level: what such a notification shows is not known.
    private func decideNotification(_ app: AskingApp, showing content: UnsafeBufferPointer<UInt8>?) -> EngineDecision {
        // By bytes: `init(rawValue:)` compares through a table made once (a `swift_once` check
        // a call), with `==`, which for these ASCII words is the same comparison.
        guard let content else { return Self.notificationTargetUnknown }
        let showsOrgData = content.isUTF8(of: NotificationContent.org.rawValue)
        guard showsOrgData || content.isUTF8(of: NotificationContent.plain.rawValue) else {
            return Self.notificationTargetUnknown
        }
        let level = app.settings.pointee.notifications
        let allowed = switch level {
        case .allow: true
        case .blockOrgData: !showsOrgData
        case .block: false
        }
        return EngineDecision(allowed: allowed, rule: app.rule(.notifications),
                        reason: DecisionReason.notification(level, showsOrgData: showsOrgData))
    }

    /// The first pattern of path glob list `list` that the resolved `path` matches.
    private func firstMatch(_ list: Int32, _ path: UnsafeBufferPointer<UInt8>) -> Int? {
        guard list >= 0 else { return nil }
        let globs = tables.pathGlobLists[Int(list)]
        for index in globs.indices where globs[index].matches(resolved: path) { return index }
        return nil
    }

    // Made where returned (nothing to retain): a `static let` is a `swift_once` check a call.
    private static var unknownApp: EngineDecision { EngineDecision(allowed: false, rule: .fixed(.unknownApp), reason: .unknownApp) }
    private static var sameApp: EngineDecision { EngineDecision(allowed: true, rule: .fixed(.sameApp), reason: .sameApp) }
    private static var exportPathMissing: EngineDecision {
        EngineDecision(allowed: false, rule: .fixed(.fileExportRelativePath), reason: .exportPathMissing)
    }
    private static var exportPathRelative: EngineDecision {
        EngineDecision(allowed: false, rule: .fixed(.fileExportRelativePath), reason: .exportPathRelative)
    }
    private static var exportPathTooLong: EngineDecision {
        EngineDecision(allowed: false, rule: .fixed(.fileExportPathTooLong), reason: .exportPathTooLong)
    }
    private static var notificationTargetUnknown: EngineDecision {
        EngineDecision(allowed: false, rule: .fixed(.notificationTarget), reason: .notificationTargetUnknown)
    }
}

extension UnsafeBufferPointer<UInt8> {
    /// Whether these are `text`'s UTF-8 bytes (byte for byte, not `==`).
    func isUTF8(of text: String) -> Bool {
        guard count == text.utf8.count else { return false }
        guard let base = baseAddress, count > 0 else { return true }
        return AppTable.withBytes(of: text) { AppTable.memoryEquals($0.baseAddress!, base, count) }
    }
}
