public import JSONCore

extension CompiledPolicy {
    /// The resolved `dlp` and `compliance` of `app` (whatever its state) as a schema-1 shaped
    /// object: `{"dlp": {...}, "compliance": {...}}` with every setting present — a built-in or
    /// `defaults` value where the app says nothing — except `fileExport.allow` when no layer
    /// has an allow list and `compliance.minVersion` when none is set. Nil for an app the policy
    /// does not name. This is what the SDK caches and what `Register` replies carry.
    public func effectiveRules(for app: AppID) -> JSONValue? {
        guard let entry = storage.table.find(app) else { return nil }
        let settings = storage.records[entry.position].settings
        let tables = storage.tables
        func patterns(_ list: ResolvedList) -> JSONValue {
            .array(tables.pathGlobLists[Int(list.list)].map { .string($0.pattern) })
        }
        var fileExport: [String: JSONValue] = ["deny": patterns(settings.fileExportDeny),
                                               "enforcement": .string(settings.fileExportEnforcement.value.rawValue)]
        if settings.fileExportAllow.list >= 0 {
            fileExport["allow"] = patterns(settings.fileExportAllow)
        }
        let dlp: JSONValue = [
            "clipboard": [
                "level": .string(settings.clipboardLevel.value.rawValue),
                "charLimit": .number(settings.clipboardCharLimit.value),
            ],
            "share": [
                "send": .string(settings.shareSend.value.rawValue),
                "receive": .string(settings.shareReceive.value.rawValue),
                "exempt": .array(tables.appIDGlobLists[Int(settings.shareExempt.list)].patterns.map(JSONValue.string)),
            ],
            "print": .string(settings.print.value.rawValue),
            "screenCapture": .string(settings.screenCapture.value.rawValue),
            "fileExport": .object(fileExport),
            "notifications": .string(settings.notifications.value.rawValue),
        ]
        var compliance: [String: JSONValue] = [
            "onViolation": .string(settings.onViolation.value.rawValue),
            "offlineGraceSeconds": .number(settings.offlineGraceSeconds.value),
        ]
        if settings.offlineWipeSeconds.value >= 0 { compliance["offlineWipeSeconds"] = .number(settings.offlineWipeSeconds.value) }
        if settings.minVersion.value >= 0 {
            compliance["minVersion"] = .string(tables.versions[Int(settings.minVersion.value)].description)
        }
        return ["dlp": dlp, "compliance": .object(compliance)]
    }
}
