import JSONCore

/// How drop-in files combine (the policy language is in docs/engine.md). In the order given:
/// each setting under `defaults` is taken from the last file that says it (settings merge key by key; a list
/// such as `share.exempt` is one setting and is replaced whole); an app entry in a later file
/// replaces that app's whole entry from earlier files; the version is the last one said.
extension Policy {
    /// Merges fragments in the order given (a policy directory's files in lexical order).
    ///
    /// - Throws: a problem when no fragment names a version, or when the merged policy has
    ///   more than `PolicyLimits.maxApps` apps.
    public static func merge(_ fragments: [PolicyFragment]) throws(PolicyProblems) -> Policy {
        var defaults = AppSettings()
        var apps: [AppID: AppPolicy] = [:]
        var version: String?
        // Several fragments with apps (a fleet's policy in drop-ins of thousands): room for all
        // at once, instead of growing and rehashing the dictionary step by step.
        if fragments.count(where: { !$0.apps.isEmpty }) > 1 {
            apps.reserveCapacity(fragments.reduce(0) { $0 + $1.apps.count })
        }
        for fragment in fragments {
            if let said = fragment.version { version = said }
            defaults = defaults.overlaid(by: fragment.defaults)
            // The first fragment with apps (often the only one) is taken whole: merging
            // into an empty dictionary would rehash every entry.
            if apps.isEmpty && apps.capacity == 0 { apps = fragment.apps } else { apps.merge(fragment.apps) { _, later in later } }
        }
        var problems: [PolicyProblem] = []
        if version == nil {
            let names = fragments.compactMap(\.source)
            problems.append(PolicyProblem(
                source: names.last, path: JSONPath.root.appending("version"),
                message: "missing \"version\": no file of the policy names one"
                    + (names.isEmpty ? "" : " (read: \(names.joined(separator: ", ")))")
                    + "; put \"version\" in one of them, such as \"2026-11-29.1\""))
        }
        if apps.count > PolicyLimits.maxApps {
            problems.append(PolicyProblem(
                path: JSONPath.root.appending("apps"),
                message: "found \(apps.count) apps after merging, expected at most \(PolicyLimits.maxApps) (PolicyLimits.maxApps)"))
        }
        guard problems.isEmpty, let version else { throw PolicyProblems(problems) }
        return Policy(version: version, defaults: defaults, apps: apps)
    }

    /// This policy with `bundle` laid over it by the merge rule: the bundle's version, each
    /// default the bundle says, and the bundle's app entries replacing this policy's.
    /// Used for the effective policy: `policy.d` overlaid by the last applied bundle.
    public func overlaying(_ bundle: Policy) -> Policy {
        Policy(version: bundle.version, defaults: defaults.overlaid(by: bundle.defaults),
               apps: apps.merging(bundle.apps) { _, later in later })
    }
}

extension AppSettings {
    /// Each setting `later` says, over the settings of `self`.
    public func overlaid(by later: AppSettings) -> AppSettings {
        AppSettings(dlp: dlp.overlaid(by: later.dlp), compliance: compliance.overlaid(by: later.compliance))
    }
}

extension DLPSettings {
    /// Each setting `later` says, over the settings of `self`.
    public func overlaid(by later: DLPSettings) -> DLPSettings {
        DLPSettings(clipboardLevel: later.clipboardLevel ?? clipboardLevel,
                    clipboardCharLimit: later.clipboardCharLimit ?? clipboardCharLimit,
                    shareSend: later.shareSend ?? shareSend,
                    shareReceive: later.shareReceive ?? shareReceive,
                    shareExempt: later.shareExempt ?? shareExempt,
                    print: later.print ?? print,
                    screenCapture: later.screenCapture ?? screenCapture,
                    fileExportAllow: later.fileExportAllow ?? fileExportAllow,
                    fileExportDeny: later.fileExportDeny ?? fileExportDeny,
                    fileExportEnforcement: later.fileExportEnforcement ?? fileExportEnforcement,
                    notifications: later.notifications ?? notifications)
    }
}

extension ComplianceSettings {
    /// Each setting `later` says, over the settings of `self`.
    public func overlaid(by later: ComplianceSettings) -> ComplianceSettings {
        ComplianceSettings(minVersion: later.minVersion ?? minVersion,
                           onViolation: later.onViolation ?? onViolation,
                           offlineGraceSeconds: later.offlineGraceSeconds ?? offlineGraceSeconds,
                           offlineWipeSeconds: later.offlineWipeSeconds ?? offlineWipeSeconds)
    }
}
