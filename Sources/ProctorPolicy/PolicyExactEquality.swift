import JSONCore

// The model's `==` compares strings as Swift does, by canonical equivalence: "café" with a
// composed é equals "café" with a decomposed one. Whether a policy read again is the one in
// force must compare bytes, the way its canonical form and SHA-256 do: a path is bytes to the
// kernel and to `PathGlob`, an executable is matched byte for byte against /proc/PID/exe,
// and a config reaches its app as it was written. Otherwise a reload whose only edit is a
// path's Unicode form would keep the old bytes in force. App ids, user names, app-id globs
// and versions' identifiers are ASCII by the schema; the policy's `version` is free text.
// `SemanticVersion`'s `==` is precedence, which ignores build metadata ("1.2.3+a" equals
// "1.2.3+b"), while the canonical form writes it: a minimum version is compared as written.

extension AppPolicy {
    /// Whether this entry and `other`, already `==`, also have the same bytes in every
    /// string that may hold non-ASCII text (its config: `JSONValue.hasSameBytes`).
    func hasSameBytes(as other: AppPolicy) -> Bool {
        sameBytes(match?.executable, other.match?.executable) && settings.hasSameBytes(as: other.settings)
            && JSONValue.object(config).hasSameBytes(as: .object(other.config))
    }
}

extension AppSettings {
    /// Whether these settings and `other`, already `==`, also have the same bytes in their paths
    /// and their minimum version (build metadata included).
    func hasSameBytes(as other: AppSettings) -> Bool {
        sameBytes(dlp.fileExportAllow, other.dlp.fileExportAllow) && sameBytes(dlp.fileExportDeny, other.dlp.fileExportDeny)
            && sameBytes(compliance.minVersion?.description, other.compliance.minVersion?.description)
    }
}

func sameBytes(_ left: String?, _ right: String?) -> Bool {
    switch (left, right) {
    case (nil, nil): true
    case (let left?, let right?): left.hasSameBytes(as: right)
    default: false
    }
}

func sameBytes(_ left: [String]?, _ right: [String]?) -> Bool {
    switch (left, right) {
    case (nil, nil): true
    case (let left?, let right?): left.count == right.count && zip(left, right).allSatisfy { $0.hasSameBytes(as: $1) }
    default: false
    }
}
