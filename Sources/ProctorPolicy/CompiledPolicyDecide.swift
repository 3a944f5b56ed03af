/// How the other app of a data action stands to the app that asks.
enum TargetStanding {
    /// The same app: data moves freely.
    case sameApp
    /// Named in policy with state `authorized`.
    case managed
    /// Anything else: not in policy, blocked, retired, or not given.
    case unmanaged
}

extension CompiledPolicyStorage {
    /// See `CompiledPolicy.decide`.
    func decide(_ request: DecisionRequest) -> Decision {
        guard let entry = table.find(request.app) else { return Self.unknownApp }
        // Fields are read through the pointer so only the cache lines a decision needs are
        // touched; the state comes from the hash slot, so most decisions read one record line.
        let record = UnsafePointer(records.baseAddress! + entry.position)
        let state = entry.state
        guard state == .authorized else {
            return Decision(allowed: false, rule: record.pointee.stateRule,
                            reason: state == .blocked ? DecisionReason.blocked : DecisionReason.retired)
        }
        let settings = UnsafeRawPointer(record).advanced(by: MemoryLayout<AppRecord>.offset(of: \AppRecord.settings)!)
            .assumingMemoryBound(to: ResolvedSettings.self)
        switch request.action {
        case .launch:
            return decideLaunch(settings, stateRule: record.pointee.stateRule, version: request.appVersion)
        case .clipboardCopy:
            return decideCopy(settings, to: standing(of: request.target, toward: request.app), size: request.size)
        case .clipboardPaste:
            return decidePaste(settings, from: standing(of: request.target, toward: request.app))
        case .shareSend:
            return decideShare(settings, sending: true, other: request.target, standing(of: request.target, toward: request.app))
        case .shareReceive:
            return decideShare(settings, sending: false, other: request.target, standing(of: request.target, toward: request.app))
        case .print:
            let print = settings.pointee.print
            return Decision(allowed: print.value == .allow, rule: print.rule, reason: DecisionReason.print(print.value))
        case .screenCapture:
            let capture = settings.pointee.screenCapture
            return Decision(allowed: capture.value == .allow, rule: capture.rule,
                            reason: DecisionReason.screenCapture(capture.value))
        case .fileExport:
            return decideExport(settings, path: request.target)
        case .notification:
            return decideNotification(settings, showing: request.target)
        }
    }

    private func standing(of target: String?, toward app: AppID) -> TargetStanding {
        guard let target else { return .unmanaged }
        if target == app { return .sameApp }
        return table.find(target)?.isManaged == true ? .managed : .unmanaged
    }

    private func decideLaunch(_ settings: UnsafePointer<ResolvedSettings>, stateRule: String, version: SemanticVersion?) -> Decision {
        let minimum = settings.pointee.minVersion
        guard minimum.value >= 0 else {
            return Decision(allowed: true, rule: stateRule, reason: DecisionReason.authorized)
        }
        if let version, version >= tables.versions[Int(minimum.value)] {
            return Decision(allowed: true, rule: minimum.rule, reason: DecisionReason.versionMeetsMinimum)
        }
        let violation = settings.pointee.onViolation.value
        return Decision(allowed: violation == .warn, rule: minimum.rule,
                        reason: DecisionReason.versionBelowMinimum(violation, versionKnown: version != nil),
                        violation: violation)
    }

    /// `charLimit` is an allowance on top of the level: a copy the level refuses still goes
    /// to any app when its size is known and at most the limit — under every level,
    /// `blocked` included, as docs/engine.md says (a charLimit applies "whatever the level").
    private func decideCopy(_ settings: UnsafePointer<ResolvedSettings>, to target: TargetStanding, size: Int?) -> Decision {
        if target == .sameApp { return Self.sameApp }
        let level = settings.pointee.clipboardLevel
        let targetManaged = target == .managed
        let allowed = switch level.value {
        case .any: true
        case .managed, .managedPasteIn: targetManaged
        case .blocked: false
        }
        let charLimit = settings.pointee.clipboardCharLimit.value
        if !allowed, charLimit > 0, let size, size >= 0, size <= charLimit {
            return Decision(allowed: true, rule: settings.pointee.clipboardCharLimit.rule, reason: DecisionReason.clipboardCharLimit)
        }
        return Decision(allowed: allowed, rule: level.rule, reason: DecisionReason.copy(level.value, targetManaged: targetManaged))
    }

    private func decidePaste(_ settings: UnsafePointer<ResolvedSettings>, from source: TargetStanding) -> Decision {
        if source == .sameApp { return Self.sameApp }
        let level = settings.pointee.clipboardLevel
        let sourceManaged = source == .managed
        let allowed = switch level.value {
        case .any, .managedPasteIn: true
        case .managed: sourceManaged
        case .blocked: false
        }
        return Decision(allowed: allowed, rule: level.rule, reason: DecisionReason.paste(level.value, sourceManaged: sourceManaged))
    }

    /// `share.send` (`sending`) or `share.receive`; an exempt app counts like a managed one.
    private func decideShare(_ settings: UnsafePointer<ResolvedSettings>, sending: Bool, other: String?, _ standing: TargetStanding) -> Decision {
        if standing == .sameApp { return Self.sameApp }
        let level = sending ? settings.pointee.shareSend : settings.pointee.shareReceive
        let otherManaged = standing == .managed
        if level.value == .managed, !otherManaged, let other {
            let exempt = settings.pointee.shareExempt
            if let index = tables.appIDGlobLists[Int(exempt.list)].firstMatch(other) {
                return Decision(allowed: true, rule: rule(exempt.entryRule(index)),
                                reason: sending ? DecisionReason.exemptReceiver : DecisionReason.exemptSender)
            }
        }
        let allowed = level.value == .any || (level.value == .managed && otherManaged)
        return Decision(allowed: allowed, rule: level.rule,
                        reason: sending ? DecisionReason.send(level.value, receiverManaged: otherManaged)
                                        : DecisionReason.receive(level.value, senderManaged: otherManaged))
    }

    /// Deny patterns win over allow patterns; with an allow list only matching paths pass.
    private func decideExport(_ settings: UnsafePointer<ResolvedSettings>, path: String?) -> Decision {
        guard let path else { return Self.exportPathMissing }
        return AppTable.withBytes(of: path) { bytes in
            guard bytes.count <= CompiledPolicy.maxExportPathBytes else { return Self.exportPathTooLong }
            return LexicalPath.withSegments(of: bytes) { bytes, segments in
                let deny = settings.pointee.fileExportDeny
                if let index = firstMatch(deny, bytes, segments) {
                    return Decision(allowed: false, rule: rule(deny.entryRule(index)), reason: DecisionReason.exportDenied)
                }
                let allow = settings.pointee.fileExportAllow
                guard allow.list >= 0 else {
                    return Decision(allowed: true, rule: allow.rule, reason: DecisionReason.exportNoAllowList)
                }
                if let index = firstMatch(allow, bytes, segments) {
                    return Decision(allowed: true, rule: rule(allow.entryRule(index)), reason: DecisionReason.exportAllowed)
                }
                return Decision(allowed: false, rule: allow.rule, reason: DecisionReason.exportNotAllowed)
            } ?? Self.exportPathRelative
        }
    }

    /// `block-org-data` lets only `plain` notifications through. A target other than `org` or
    /// `plain` is denied under every level: what such a notification shows is not known.
    private func decideNotification(_ settings: UnsafePointer<ResolvedSettings>, showing content: String?) -> Decision {
        guard let content = content.flatMap(NotificationContent.init(rawValue:)) else { return Self.notificationTargetUnknown }
        let showsOrgData = content == .org
        let level = settings.pointee.notifications
        let allowed = switch level.value {
        case .allow: true
        case .blockOrgData: !showsOrgData
        case .block: false
        }
        return Decision(allowed: allowed, rule: level.rule, reason: DecisionReason.notification(level.value, showsOrgData: showsOrgData))
    }

    private func firstMatch(_ list: ResolvedList, _ bytes: UnsafeBufferPointer<UInt8>,
                            _ segments: UnsafeBufferPointer<PathSegment>) -> Int? {
        guard list.list >= 0 else { return nil }
        let globs = tables.pathGlobLists[Int(list.list)]
        for index in globs.indices where globs[index].matches(bytes, segments) { return index }
        return nil
    }

    private static let unknownApp = Decision(allowed: false, rule: BuiltinDefaults.Rule.unknownApp, reason: DecisionReason.unknownApp)
    private static let sameApp = Decision(allowed: true, rule: BuiltinDefaults.Rule.sameApp, reason: DecisionReason.sameApp)
    private static let exportPathMissing = Decision(allowed: false, rule: BuiltinDefaults.Rule.fileExportRelativePath,
                                                    reason: DecisionReason.exportPathMissing)
    private static let exportPathRelative = Decision(allowed: false, rule: BuiltinDefaults.Rule.fileExportRelativePath,
                                                     reason: DecisionReason.exportPathRelative)
    private static let exportPathTooLong = Decision(allowed: false, rule: BuiltinDefaults.Rule.fileExportPathTooLong,
                                                    reason: DecisionReason.exportPathTooLong)
    private static let notificationTargetUnknown = Decision(allowed: false, rule: BuiltinDefaults.Rule.notificationTarget,
                                                            reason: DecisionReason.notificationTargetUnknown)
}
