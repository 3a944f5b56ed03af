import Foundation
public import ProctorPolicy
import Synchronization

/// Answers the app's data-leak questions from the rules proctord last sent, compiled into the
/// same engine the daemon uses: a check costs no round trip and keeps working while proctord
/// restarts.
///
/// Guarantees:
/// - Before the app registered with proctord, every answer is a denial (rule
///   `sdk.notRegistered`): an app that never registered fails closed.
/// - While proctord is unreachable the cached rules stay in force for
///   `compliance.offlineGraceSeconds`; past that every answer is a denial (rule
///   `sdk.offlineGrace`) until proctord answers again.
/// - Each denial is reported to proctord (`ReportEvent` `dataActionDenied`) in the background.
///
/// Rule names in the answers name the app's effective setting (`apps["id"].dlp.print`), where
/// the daemon may name the layer that supplied it (`defaults.dlp.print`); `allowed` is the same.
public final class DataGuard: Sendable {
    /// The guard of the running `PolicyApplication`.
    public static let shared = DataGuard()

    /// The rule of a denial made because the app is not registered.
    public static let notRegisteredRule = "sdk.notRegistered"
    /// The rule of a denial made because proctord has been away longer than the grace period.
    public static let offlineGraceRule = "sdk.offlineGrace"

    struct State {
        var appID: AppID?
        var policy: CompiledPolicy?
        var offlineGrace: Duration = .seconds(86_400)
        var offlineSince: ContinuousClock.Instant?
        var reportDenial: (@Sendable (Action, String?, Decision) -> Void)?
    }

    private let state = Mutex(State())

    /// A guard that denies everything until rules are installed.
    public init() {}

    // MARK: The questions

    /// May `length` characters be copied to the app `destination` (nil: an unknown or unmanaged app)?
    public func canCopy(to destination: String?, length: Int) -> Decision {
        decide(.clipboardCopy, target: destination, size: length)
    }
    /// May the app paste what the app `source` copied (nil: an unknown or unmanaged app)?
    public func canPaste(from source: String?) -> Decision { decide(.clipboardPaste, target: source) }
    /// May the app share (send) data to the app `receiver`?
    public func canShare(to receiver: String?) -> Decision { decide(.shareSend, target: receiver) }
    /// May the app receive data shared by the app `sender`?
    public func canReceive(from sender: String?) -> Decision { decide(.shareReceive, target: sender) }
    /// May the app print?
    public func canPrint() -> Decision { decide(.print, target: nil) }
    /// May the screen be captured while the app shows its data?
    public func canCaptureScreen() -> Decision { decide(.screenCapture, target: nil) }
    /// May the app show a notification? `showingOrgData`: it would show organisation data
    /// (a message's sender or text) rather than a neutral line such as "1 new message";
    /// under `notifications: block-org-data` only the neutral one is allowed.
    public func canNotify(showingOrgData: Bool) -> Decision {
        decide(.notification, target: (showingOrgData ? NotificationContent.org : .plain).rawValue)
    }
    /// May the app write its data to `path`? Symbolic links are resolved first (`realpath`;
    /// for a file that does not exist yet, of its folder), so a link cannot smuggle data out.
    public func canExport(toPath path: String) -> Decision {
        decide(.fileExport, target: Self.resolvingSymbolicLinks(path))
    }

    /// The answer for any action; the methods above are the usual way in.
    public func decide(_ action: Action, target: String?, size: Int? = nil) -> Decision {
        let (decision, report) = state.withLock { state -> (Decision, (@Sendable (Action, String?, Decision) -> Void)?) in
            guard let appID = state.appID, let policy = state.policy else {
                return (Decision(allowed: false, rule: Self.notRegisteredRule,
                                 reason: "The app has not registered with proctord, so no data action is allowed."), nil)
            }
            if let since = state.offlineSince, ContinuousClock.now - since > state.offlineGrace {
                return (Decision(allowed: false, rule: Self.offlineGraceRule,
                                 reason: "proctord has been unreachable for longer than the offline grace period."), state.reportDenial)
            }
            return (policy.decide(DecisionRequest(app: appID, action: action, target: target, size: size)), state.reportDenial)
        }
        if !decision.allowed { report?(action, target, decision) }
        return decision
    }

    // MARK: Fed by PolicyApplication

    /// Puts freshly received rules in force; proctord is reachable (a reconnection registers
    /// again, so this also ends an offline period).
    func install(_ policy: CompiledPolicy, for appID: AppID, offlineGraceSeconds: Int) {
        state.withLock { state in
            state.appID = appID
            state.policy = policy
            state.offlineGrace = .seconds(max(0, offlineGraceSeconds))
            state.offlineSince = nil
        }
    }

    /// Where denials go (to proctord, in the background).
    func setDenialReporter(_ report: @escaping @Sendable (Action, String?, Decision) -> Void) {
        state.withLock { $0.reportDenial = report }
    }

    /// proctord went away: the grace period starts now (unless it already started).
    func connectionLost(at instant: ContinuousClock.Instant = .now) {
        state.withLock { state in
            if state.offlineSince == nil { state.offlineSince = instant }
        }
    }

    static func resolvingSymbolicLinks(_ path: String) -> String {
        if let resolved = realPath(path) { return resolved }
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        guard path.hasPrefix("/"), let resolvedFolder = realPath(folder) else { return path }
        return resolvedFolder == "/" ? "/" + url.lastPathComponent : resolvedFolder + "/" + url.lastPathComponent
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
