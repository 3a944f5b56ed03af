import JSONCore

/// Serialises a policy in its canonical form straight into one byte buffer, giving the
/// same bytes as `Policy.canonicalJSON.serialized()` (a test holds the two equal). The
/// model's keys are fixed, so each object's members are written in their sorted order
/// as the code states them; only app ids and `config` need sorting at run time.
struct CanonicalWriter {
    private(set) var bytes: [UInt8] = []
    /// Whether the object being written has no member yet (one entry per open object).
    private var objectIsEmpty: [Bool] = []

    mutating func write(_ policy: Policy) {
        bytes.reserveCapacity(64 + policy.apps.count * 512)
        beginObject()
        if !policy.apps.isEmpty {
            key("apps")
            beginObject()
            // Sorting the ids alone and looking each entry up is cheaper than sorting
            // (id, entry) pairs, which copies whole entries around.
            for id in Self.byteOrdered(policy.apps.keys) {
                key(id)
                write(policy.apps[id]!)
            }
            endObject()
        }
        if !policy.defaults.isEmpty {
            key("defaults")
            beginObject()
            writeMembers(of: policy.defaults)
            endObject()
        }
        key("schema")
        JSONValue.writeNumber(Policy.supportedSchema, to: &bytes)
        key("version")
        JSONValue.writeString(policy.version, to: &bytes)
        endObject()
    }

    /// `ids` sorted by their UTF-8 bytes. The ids the policy language accepts are ASCII
    /// (`PolicySyntax.isAppID`), for which `String`'s own order is byte order and several
    /// times cheaper than `utf8Less` (one `memcmp`, no copies per comparison): at 100 000 apps
    /// the sort was a quarter of proctord's start-up samples. Other keys, which only a policy
    /// built in code can hold, keep `utf8Less`.
    static func byteOrdered(_ ids: some Collection<String>) -> [String] {
        ids.allSatisfy { $0.utf8.allSatisfy { $0 < 0x80 } } ? ids.sorted() : ids.sorted(by: JSONValue.utf8Less)
    }

    private mutating func write(_ app: AppPolicy) {
        beginObject()
        if !app.settings.compliance.isEmpty {
            key("compliance")
            write(app.settings.compliance)
        }
        if !app.config.isEmpty {
            key("config")
            JSONValue.object(app.config).write(to: &bytes)
        }
        if !app.settings.dlp.isEmpty {
            key("dlp")
            write(app.settings.dlp)
        }
        if let match = app.match {
            key("match")
            beginObject()
            if let executable = match.executable { key("executable"); JSONValue.writeString(executable, to: &bytes) }
            if let users = match.users { key("users"); write(users) }
            endObject()
        }
        key("state")
        JSONValue.writeString(app.state.rawValue, to: &bytes)
        endObject()
    }

    /// `compliance` and `dlp`, each left out when empty.
    private mutating func writeMembers(of settings: AppSettings) {
        if !settings.compliance.isEmpty { key("compliance"); write(settings.compliance) }
        if !settings.dlp.isEmpty { key("dlp"); write(settings.dlp) }
    }

    private mutating func write(_ dlp: DLPSettings) {
        beginObject()
        if dlp.clipboardLevel != nil || dlp.clipboardCharLimit != nil {
            key("clipboard")
            beginObject()
            if let limit = dlp.clipboardCharLimit { key("charLimit"); JSONValue.writeNumber(limit, to: &bytes) }
            if let level = dlp.clipboardLevel { key("level"); JSONValue.writeString(level.rawValue, to: &bytes) }
            endObject()
        }
        if dlp.fileExportAllow != nil || dlp.fileExportDeny != nil || dlp.fileExportEnforcement != nil {
            key("fileExport")
            beginObject()
            if let allow = dlp.fileExportAllow { key("allow"); write(allow) }
            if let deny = dlp.fileExportDeny { key("deny"); write(deny) }
            if let enforcement = dlp.fileExportEnforcement { key("enforcement"); JSONValue.writeString(enforcement.rawValue, to: &bytes) }
            endObject()
        }
        if let notifications = dlp.notifications { key("notifications"); JSONValue.writeString(notifications.rawValue, to: &bytes) }
        if let print = dlp.print { key("print"); JSONValue.writeString(print.rawValue, to: &bytes) }
        if let screenCapture = dlp.screenCapture { key("screenCapture"); JSONValue.writeString(screenCapture.rawValue, to: &bytes) }
        if dlp.shareSend != nil || dlp.shareReceive != nil || dlp.shareExempt != nil {
            key("share")
            beginObject()
            if let exempt = dlp.shareExempt { key("exempt"); write(exempt) }
            if let receive = dlp.shareReceive { key("receive"); JSONValue.writeString(receive.rawValue, to: &bytes) }
            if let send = dlp.shareSend { key("send"); JSONValue.writeString(send.rawValue, to: &bytes) }
            endObject()
        }
        endObject()
    }

    private mutating func write(_ compliance: ComplianceSettings) {
        beginObject()
        if let minVersion = compliance.minVersion { key("minVersion"); JSONValue.writeString(minVersion.description, to: &bytes) }
        if let grace = compliance.offlineGraceSeconds { key("offlineGraceSeconds"); JSONValue.writeNumber(grace, to: &bytes) }
        if let wipe = compliance.offlineWipeSeconds { key("offlineWipeSeconds"); JSONValue.writeNumber(wipe, to: &bytes) }
        if let onViolation = compliance.onViolation { key("onViolation"); JSONValue.writeString(onViolation.rawValue, to: &bytes) }
        endObject()
    }

    private mutating func write(_ strings: [String]) {
        bytes.append(UInt8(ascii: "["))
        for (i, string) in strings.enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONValue.writeString(string, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    private mutating func beginObject() {
        bytes.append(UInt8(ascii: "{"))
        objectIsEmpty.append(true)
    }

    private mutating func endObject() {
        objectIsEmpty.removeLast()
        bytes.append(UInt8(ascii: "}"))
    }

    /// Writes `name` and the colon, after a comma unless it is the object's first member.
    private mutating func key(_ name: String) {
        if objectIsEmpty[objectIsEmpty.count - 1] {
            objectIsEmpty[objectIsEmpty.count - 1] = false
        } else {
            bytes.append(UInt8(ascii: ","))
        }
        JSONValue.writeString(name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }
}

extension AppSettings {
    var isEmpty: Bool { dlp.isEmpty && compliance.isEmpty }
}

extension DLPSettings {
    var isEmpty: Bool { self == DLPSettings() }
}

extension ComplianceSettings {
    var isEmpty: Bool { self == ComplianceSettings() }
}
