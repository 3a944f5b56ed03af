import JSONCore
import ProctorPolicy

/// Policies and paths shared by the engine tests.
enum EngineFixtures {
    static let managedTarget = "com.example.mail"
    static let unknownTarget = "org.elsewhere.chat"
    static let blockedTarget = "com.example.blocked"
    static let retiredTarget = "com.example.retired"

    /// The JSON path prefix of an app, as the engine and the parser render it.
    static func appPath(_ id: AppID) -> String { JSONPath([.key("apps"), .key(id)]).description }

    /// A policy with the standard targets and `apps` added.
    static func policy(defaults: AppSettings = AppSettings(), _ apps: [AppID: AppPolicy] = [:]) -> Policy {
        var all: [AppID: AppPolicy] = [
            managedTarget: AppPolicy(),
            blockedTarget: AppPolicy(state: .blocked),
            retiredTarget: AppPolicy(state: .retired),
        ]
        all.merge(apps) { _, new in new }
        return Policy(version: "test", defaults: defaults, apps: all)
    }

    static func app(_ dlp: DLPSettings = DLPSettings(), compliance: ComplianceSettings = ComplianceSettings(),
                    state: AppState = .authorized) -> AppPolicy {
        AppPolicy(state: state, settings: AppSettings(dlp: dlp, compliance: compliance))
    }
}
