public import JSONCore

/// The canonical form identifies a policy whatever its files' key order, spacing or
/// split into drop-ins: the merged policy as one schema-1 document holding only what was
/// said (omitted settings stay omitted; empty objects are left out; `state` is always
/// written, as an omitted state means `authorized`), serialised with keys sorted by
/// UTF-8 bytes and no white space. `Policy.parse(canonicalBytes)` gives the policy back.
extension Policy {
    public var canonicalJSON: JSONValue {
        var document: [String: JSONValue] = ["schema": .number(Policy.supportedSchema), "version": .string(version)]
        let defaultsJSON = defaults.canonicalMembers
        if !defaultsJSON.isEmpty { document["defaults"] = .object(defaultsJSON) }
        if !apps.isEmpty { document["apps"] = .object(apps.mapValues(\.canonicalJSON)) }
        return .object(document)
    }

    /// `canonicalJSON` serialised: UTF-8, sorted keys, no insignificant white space.
    /// Written straight from the model (`CanonicalWriter`) rather than through
    /// `canonicalJSON`: building and sorting that tree cost most of the hash at start-up.
    public var canonicalBytes: [UInt8] {
        var writer = CanonicalWriter()
        writer.write(self)
        return writer.bytes
    }

    /// Why this policy cannot be a bundle, or nil: its canonical form (`canonicalSize`
    /// bytes), which proctord stores and sends, must fit `PolicyLimits.maxDocumentBytes`.
    /// A file within the limit can exceed it here: `1e14` is written out in full.
    public static func bundleSizeProblem(canonicalSize: Int, source: String?) -> PolicyProblem? {
        guard canonicalSize > PolicyLimits.maxDocumentBytes else { return nil }
        return PolicyProblem(source: source, message: "the policy is \(canonicalSize) bytes in canonical form, more than the "
            + "\(PolicyLimits.describe(bytes: PolicyLimits.maxDocumentBytes)) a bundle may be (PolicyLimits.maxDocumentBytes)")
    }

    /// The SHA-256 of `canonicalBytes` in lowercase hex: the policy's identity in status
    /// output, logs and history.
    public var sha256: String { SHA256.hexDigest(canonicalBytes) }
}

extension AppPolicy {
    /// This entry as it appears under `apps` in the canonical form.
    public var canonicalJSON: JSONValue {
        var entry = settings.canonicalMembers
        entry["state"] = .string(state.rawValue)
        if let match {
            var matchJSON: [String: JSONValue] = [:]
            if let executable = match.executable { matchJSON["executable"] = .string(executable) }
            if let users = match.users { matchJSON["users"] = .array(users.map(JSONValue.string)) }
            entry["match"] = .object(matchJSON)
        }
        if !config.isEmpty { entry["config"] = .object(config) }
        return .object(entry)
    }
}

extension AppSettings {
    /// `dlp` and `compliance` as members of the enclosing object, each left out when empty.
    var canonicalMembers: [String: JSONValue] {
        var members: [String: JSONValue] = [:]
        let dlpJSON = dlp.canonicalMembers
        if !dlpJSON.isEmpty { members["dlp"] = .object(dlpJSON) }
        let complianceJSON = compliance.canonicalMembers
        if !complianceJSON.isEmpty { members["compliance"] = .object(complianceJSON) }
        return members
    }
}

extension DLPSettings {
    var canonicalMembers: [String: JSONValue] {
        var members: [String: JSONValue] = [:]
        var clipboard: [String: JSONValue] = [:]
        if let clipboardLevel { clipboard["level"] = .string(clipboardLevel.rawValue) }
        if let clipboardCharLimit { clipboard["charLimit"] = .number(clipboardCharLimit) }
        if !clipboard.isEmpty { members["clipboard"] = .object(clipboard) }
        var share: [String: JSONValue] = [:]
        if let shareSend { share["send"] = .string(shareSend.rawValue) }
        if let shareReceive { share["receive"] = .string(shareReceive.rawValue) }
        if let shareExempt { share["exempt"] = .array(shareExempt.map(JSONValue.string)) }
        if !share.isEmpty { members["share"] = .object(share) }
        if let print { members["print"] = .string(print.rawValue) }
        if let screenCapture { members["screenCapture"] = .string(screenCapture.rawValue) }
        var fileExport: [String: JSONValue] = [:]
        if let fileExportAllow { fileExport["allow"] = .array(fileExportAllow.map(JSONValue.string)) }
        if let fileExportDeny { fileExport["deny"] = .array(fileExportDeny.map(JSONValue.string)) }
        if let fileExportEnforcement { fileExport["enforcement"] = .string(fileExportEnforcement.rawValue) }
        if !fileExport.isEmpty { members["fileExport"] = .object(fileExport) }
        if let notifications { members["notifications"] = .string(notifications.rawValue) }
        return members
    }
}

extension ComplianceSettings {
    var canonicalMembers: [String: JSONValue] {
        var members: [String: JSONValue] = [:]
        if let minVersion { members["minVersion"] = .string(minVersion.description) }
        if let onViolation { members["onViolation"] = .string(onViolation.rawValue) }
        if let offlineGraceSeconds { members["offlineGraceSeconds"] = .number(offlineGraceSeconds) }
        if let offlineWipeSeconds { members["offlineWipeSeconds"] = .number(offlineWipeSeconds) }
        return members
    }
}
