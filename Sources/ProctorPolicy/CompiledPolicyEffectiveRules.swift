public import JSONCore

extension CompiledPolicy {
    /// The resolved `dlp` and `compliance` of `app` (whatever its state) as a schema-1 shaped
    /// object: `{"dlp": {...}, "compliance": {...}}` with every setting present — a built-in or
    /// `defaults` value where the app says nothing — except `fileExport.allow` when no layer
    /// has an allow list and `compliance.minVersion` when none is set. Nil for an app the policy
    /// does not name. This is what the SDK caches and what `Register` replies carry.
    public func effectiveRules(for app: AppID) -> JSONValue? {
        guard let settings = compiledApp(app)?.settings else { return nil }
        var fileExport: [String: JSONValue] = ["deny": .array(settings.fileExportDeny.globs.map { .string($0.pattern) })]
        if let allow = settings.fileExportAllow {
            fileExport["allow"] = .array(allow.globs.map { .string($0.pattern) })
        }
        let dlp: JSONValue = [
            "clipboard": [
                "level": .string(settings.clipboardLevel.value.rawValue),
                "charLimit": .number(settings.clipboardCharLimit.value),
            ],
            "share": [
                "send": .string(settings.shareSend.value.rawValue),
                "receive": .string(settings.shareReceive.value.rawValue),
                "exempt": .array(settings.shareExempt.list.patterns.map(JSONValue.string)),
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
        if let minimum = settings.minVersion.value {
            compliance["minVersion"] = .string(minimum.description)
        }
        return ["dlp": dlp, "compliance": .object(compliance)]
    }
}
