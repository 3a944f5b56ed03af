import ProctorPolicy
import TestSupport

/// A policy of `appCount` apps that uses every rule kind, and a matching mix of requests.
///
/// Apps cycle through every clipboard, share, toggle and violation value; every app has
/// exempt globs, file-export allow and deny globs and a minimum version; one in five leaves
/// its DLP settings to `defaults`; one in 50 is blocked and one in 97 retired.
struct SyntheticPolicy {
    let policy: Policy
    let appIDs: [AppID]

    init(appCount: Int) {
        var apps: [AppID: AppPolicy] = Dictionary(minimumCapacity: appCount)
        var ids: [AppID] = []
        ids.reserveCapacity(appCount)
        for index in 0..<appCount {
            let id = Self.appID(index)
            ids.append(id)
            let state: AppState = index % 97 == 96 ? .retired : index % 50 == 49 ? .blocked : .authorized
            let dlp = index % 5 == 0 ? DLPSettings() : DLPSettings(
                clipboardLevel: ClipboardLevel.allCases[index % 4],
                clipboardCharLimit: index % 3 == 0 ? 0 : 20 + index % 50,
                shareSend: ShareLevel.allCases[index % 3],
                shareReceive: ShareLevel.allCases[(index / 3) % 3],
                shareExempt: ["com.partner.*", "org.bench.viewer\(index % 100)", "*.archive"],
                print: Toggle.allCases[index % 2],
                screenCapture: Toggle.allCases[(index / 2) % 2],
                fileExportAllow: index % 2 == 0 ? ["/home/*/Documents/Work/**", "/srv/export/app\(index)/*.pdf"] : nil,
                fileExportDeny: ["/home/*/Documents/Work/Secret/**", "/tmp/**", "/media/**/*.key"],
                notifications: NotificationLevel.allCases[index % 3])
            let compliance = ComplianceSettings(minVersion: SemanticVersion(major: 2, minor: index % 10, patch: 0),
                                                onViolation: Violation.allCases[index % 3],
                                                offlineGraceSeconds: 3600 * (1 + index % 24))
            apps[id] = AppPolicy(state: state, match: MatchRule(executable: "/usr/bin/bench-\(index)", users: ["*"]),
                                 settings: AppSettings(dlp: dlp, compliance: compliance))
        }
        let defaults = AppSettings(dlp: DLPSettings(clipboardLevel: .managed, clipboardCharLimit: 10,
                                                    shareExempt: ["com.example.*"], fileExportDeny: ["/tmp/**"]))
        policy = Policy(version: "bench-\(appCount)", defaults: defaults, apps: apps)
        appIDs = ids
    }

    static func appID(_ index: Int) -> AppID { "com.bench.app\(index)" }

    static let exportPaths = [
        "/home/ann/Documents/Work/report.txt", "/home/ann/Documents/Work/Secret/plan.txt",
        "/home/ann/Documents/Work/../../.ssh/id_rsa", "/tmp/out.txt", "/srv/export/app7/q1.pdf",
        "/media/usb/keys/disk.key", "relative/path.txt", "/home/ann/Downloads/file.bin/",
    ]

    /// Mostly the two contents a notification may show; now and then none or a wrong one.
    static let notificationTargets: [String?] = ["org", "plain", "org", "plain", nil, "banner"]

    /// `count` requests over random actions and targets (any app of the policy, or none in
    /// it), asked by uniformly random apps (one in 20 unknown) — or, with `activeApps`, by that
    /// many apps only, as on a machine where a few managed apps are running.
    /// Each request owns fresh copies of its strings, as a request parsed off a socket does,
    /// so the workload does not read the policy's own id strings.
    func requests(count: Int, seed: UInt64, activeApps: Int? = nil) -> [DecisionRequest] {
        func fresh(_ text: String) -> String { String(decoding: Array(text.utf8), as: UTF8.self) }
        var random = SeededGenerator(seed: seed)
        let askers = activeApps.map { Array(appIDs.shuffled(using: &random).prefix($0)) } ?? appIDs
        return (0..<count).map { _ in
            let app = Int.random(in: 0..<20, using: &random) == 0 ? "org.unknown.app" : askers.randomElement(using: &random)!
            let action = Action.allCases.randomElement(using: &random)!
            let target: String? = switch action {
            case .fileExport: Self.exportPaths.randomElement(using: &random)!
            case .launch, .print, .screenCapture: nil
            case .notification: Self.notificationTargets.randomElement(using: &random)!
            default:
                switch Int.random(in: 0..<6, using: &random) {
                case 0: app
                case 1: "org.unknown.other"
                case 2: "com.partner.mail"
                default: appIDs.randomElement(using: &random)!
                }
            }
            return DecisionRequest(app: fresh(app), action: action, target: target.map(fresh), size: Int.random(in: 0..<80, using: &random),
                                   appVersion: SemanticVersion(major: 2, minor: Int.random(in: 0..<10, using: &random), patch: 1))
        }
    }
}
