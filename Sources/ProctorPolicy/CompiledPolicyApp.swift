/// How the other app of a data action stands to the app that asks.
enum TargetStanding {
    /// The same app: data moves freely.
    case sameApp
    /// Named in policy with state `authorized`.
    case managed
    /// Anything else: not in policy, blocked, retired, or not given.
    case unmanaged
}

/// One app of the policy with every setting resolved and every rule string precomputed, so
/// deciding reads fields and compares values but builds no strings.
final class CompiledApp: Sendable {
    let id: AppID
    let state: AppState
    let settings: ResolvedSettings
    /// `apps["x"].state`
    let stateRule: String

    init(id: AppID, state: AppState, settings: ResolvedSettings, stateRule: String) {
        self.id = id
        self.state = state
        self.settings = settings
        self.stateRule = stateRule
    }

    var isManaged: Bool { state == .authorized }

    /// The denial of everything for an app that is not authorized.
    var stateDenial: Decision {
        Decision(allowed: false, rule: stateRule, reason: state == .blocked ? DecisionReason.blocked : DecisionReason.retired)
    }

    func decideLaunch(version: SemanticVersion?) -> Decision {
        let minimum = settings.minVersion
        guard let required = minimum.value else {
            return Decision(allowed: true, rule: stateRule, reason: DecisionReason.authorized)
        }
        if let version, version >= required {
            return Decision(allowed: true, rule: minimum.rule, reason: DecisionReason.versionMeetsMinimum)
        }
        let violation = settings.onViolation.value
        return Decision(allowed: violation == .warn, rule: minimum.rule,
                        reason: DecisionReason.versionBelowMinimum(violation, versionKnown: version != nil),
                        violation: violation)
    }

    /// `charLimit` is an allowance on top of the level: a copy the level refuses still goes
    /// to any app when its size is known and at most the limit — under every level,
    /// `blocked` included, as DESIGN.md §4 says ("whatever the level").
    func decideCopy(to target: TargetStanding, size: Int?) -> Decision {
        if target == .sameApp { return Self.sameApp }
        let level = settings.clipboardLevel
        let targetManaged = target == .managed
        let allowed = switch level.value {
        case .any: true
        case .managed, .managedPasteIn: targetManaged
        case .blocked: false
        }
        let charLimit = settings.clipboardCharLimit.value
        if !allowed, charLimit > 0, let size, size >= 0, size <= charLimit {
            return Decision(allowed: true, rule: settings.clipboardCharLimit.rule, reason: DecisionReason.clipboardCharLimit)
        }
        return Decision(allowed: allowed, rule: level.rule, reason: DecisionReason.copy(level.value, targetManaged: targetManaged))
    }

    func decidePaste(from source: TargetStanding) -> Decision {
        if source == .sameApp { return Self.sameApp }
        let level = settings.clipboardLevel
        let sourceManaged = source == .managed
        let allowed = switch level.value {
        case .any, .managedPasteIn: true
        case .managed: sourceManaged
        case .blocked: false
        }
        return Decision(allowed: allowed, rule: level.rule, reason: DecisionReason.paste(level.value, sourceManaged: sourceManaged))
    }

    /// `share.send` (`sending`) or `share.receive`; an exempt app counts like a managed one.
    func decideShare(sending: Bool, other: TargetStanding, otherID: String?) -> Decision {
        if other == .sameApp { return Self.sameApp }
        let level = sending ? settings.shareSend : settings.shareReceive
        let otherManaged = other == .managed
        switch level.value {
        case .none, .any:
            break
        case .managed where !otherManaged:
            let exempt = settings.shareExempt
            if let otherID, let index = exempt.list.firstMatch(otherID) {
                return Decision(allowed: true, rule: exempt.entryRules[index],
                                reason: sending ? DecisionReason.exemptReceiver : DecisionReason.exemptSender)
            }
        case .managed:
            break
        }
        let allowed = level.value == .any || (level.value == .managed && otherManaged)
        return Decision(allowed: allowed, rule: level.rule,
                        reason: sending ? DecisionReason.send(level.value, receiverManaged: otherManaged)
                                        : DecisionReason.receive(level.value, senderManaged: otherManaged))
    }

    func decidePrint() -> Decision {
        let setting = settings.print
        return Decision(allowed: setting.value == .allow, rule: setting.rule, reason: DecisionReason.print(setting.value))
    }

    func decideScreenCapture() -> Decision {
        let setting = settings.screenCapture
        return Decision(allowed: setting.value == .allow, rule: setting.rule, reason: DecisionReason.screenCapture(setting.value))
    }

    /// Deny patterns win over allow patterns; with an allow list only matching paths pass.
    func decideExport(path: String?) -> Decision {
        guard var path else { return Self.exportPathMissing }
        return path.withUTF8 { bytes in
            guard bytes.count <= CompiledPolicy.maxExportPathBytes else { return Self.exportPathTooLong }
            return LexicalPath.withSegments(of: bytes) { bytes, segments in
                if let rule = settings.fileExportDeny.firstMatch(bytes, segments) {
                    return Decision(allowed: false, rule: rule, reason: DecisionReason.exportDenied)
                }
                guard let allow = settings.fileExportAllow else {
                    return Decision(allowed: true, rule: BuiltinDefaults.Rule.fileExportAllow, reason: DecisionReason.exportNoAllowList)
                }
                if let rule = allow.firstMatch(bytes, segments) {
                    return Decision(allowed: true, rule: rule, reason: DecisionReason.exportAllowed)
                }
                return Decision(allowed: false, rule: allow.rule, reason: DecisionReason.exportNotAllowed)
            } ?? Self.exportPathRelative
        }
    }

    private static let sameApp = Decision(allowed: true, rule: BuiltinDefaults.Rule.sameApp, reason: DecisionReason.sameApp)
    private static let exportPathMissing = Decision(allowed: false, rule: BuiltinDefaults.Rule.fileExportRelativePath,
                                                    reason: DecisionReason.exportPathMissing)
    private static let exportPathRelative = Decision(allowed: false, rule: BuiltinDefaults.Rule.fileExportRelativePath,
                                                     reason: DecisionReason.exportPathRelative)
    private static let exportPathTooLong = Decision(allowed: false, rule: BuiltinDefaults.Rule.fileExportPathTooLong,
                                                    reason: DecisionReason.exportPathTooLong)
}
