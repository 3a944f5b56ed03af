public import JSONCore

extension CompiledPolicy {
    /// The resolved `dlp` and `compliance` of `app` (whatever its state) as a schema-1 shaped
    /// object: `{"dlp": {...}, "compliance": {...}}` with every setting present — a built-in or
    /// `defaults` value where the app says nothing — except `fileExport.allow` when no layer
    /// has an allow list and `compliance.minVersion` when none is set. Nil for an app the policy
    /// does not name. This is what the SDK caches and what `Register` replies carry.
    public func effectiveRules(for app: AppID) -> JSONValue? {
        guard let entry = storage.table.find(app) else { return nil }
        let settings = storage.table.settings(at: entry.position).pointee
        let offline = storage.offlineSeconds(at: entry.position)
        let tables = storage.tables
        func patterns(_ list: Int32) -> JSONValue {
            .array(tables.pathGlobLists[Int(list)].map { .string($0.pattern) })
        }
        var fileExport: [String: JSONValue] = ["deny": patterns(settings.fileExportDeny),
                                               "enforcement": .string(settings.fileExportEnforcement.rawValue)]
        if settings.fileExportAllow >= 0 {
            fileExport["allow"] = patterns(settings.fileExportAllow)
        }
        let dlp: JSONValue = [
            "clipboard": [
                "level": .string(settings.clipboardLevel.rawValue),
                "charLimit": .number(settings.clipboardCharLimit),
            ],
            "share": [
                "send": .string(settings.shareSend.rawValue),
                "receive": .string(settings.shareReceive.rawValue),
                "exempt": .array(tables.appIDGlobLists[Int(settings.shareExempt)].patterns.map(JSONValue.string)),
            ],
            "print": .string(settings.print.rawValue),
            "screenCapture": .string(settings.screenCapture.rawValue),
            "fileExport": .object(fileExport),
            "notifications": .string(settings.notifications.rawValue),
        ]
        var compliance: [String: JSONValue] = [
            "onViolation": .string(settings.onViolation.rawValue),
            "offlineGraceSeconds": .number(offline.grace),
        ]
        if offline.wipe >= 0 { compliance["offlineWipeSeconds"] = .number(offline.wipe) }
        if settings.minVersion >= 0 {
            compliance["minVersion"] = .string(tables.versions[Int(settings.minVersion)].description)
        }
        return ["dlp": dlp, "compliance": .object(compliance)]
    }
}
