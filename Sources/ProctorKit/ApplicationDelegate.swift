public import JSONCore

/// The object that receives an application's lifecycle events, with UIKit's method names.
///
/// Every method has a default implementation that does nothing (and lets launch proceed),
/// so a delegate implements only what it needs. All calls arrive on the main actor, one at a
/// time, in the order the events happened. `ApplicationMain` creates the delegate from its
/// class name with `init()`, so a non-final delegate class declares `required init()`.
@MainActor
public protocol ApplicationDelegate: AnyObject {
    /// Creates the delegate; `ApplicationMain` calls it before launch.
    init()

    /// Launch is done. Returning false ends the process with
    /// `ApplicationExitStatus.launchDeclined` and a line on standard error naming the cause.
    /// `launchOptions` holds `.arguments`, the command line.
    func application(_ application: Application,
                     didFinishLaunchingWithOptions launchOptions: [Application.LaunchOptionsKey: Any]?) -> Bool
    /// The login session of the process became active (also right after launch when it is).
    func applicationDidBecomeActive(_ application: Application)
    /// The login session became inactive (screen locked, another session switched in), or
    /// the process is about to go to the background.
    func applicationWillResignActive(_ application: Application)
    /// Job control suspended the process (SIGTSTP); the process stops when this returns.
    func applicationDidEnterBackground(_ application: Application)
    /// Job control continued the process (SIGCONT) after `applicationDidEnterBackground`.
    func applicationWillEnterForeground(_ application: Application)
    /// SIGTERM or SIGINT: the process exits with status 0 when this returns.
    func applicationWillTerminate(_ application: Application)
    /// The kernel reports memory pressure (PSI): release what can be rebuilt.
    func applicationDidReceiveMemoryWarning(_ application: Application)
    /// Another user's session took the seat the process's session is on.
    func applicationUserDidChange(_ application: Application)
    /// A push for this application arrived (an MDM command delivered by proctord).
    func application(_ application: Application, didReceiveRemoteNotification userInfo: [String: JSONValue])
    /// The managed configuration of this application changed.
    func applicationManagedConfigurationDidChange(_ application: Application)
    /// SIGHUP: reload configuration.
    func applicationDidReceiveReload(_ application: Application)
    /// `PolicyApplication`: proctord does not let the app run — it is blocked or retired, its
    /// launch was denied (such as a version below `compliance.minVersion`), or it could not
    /// register. At launch didFinishLaunching never follows; while running, no further event
    /// does. The default writes `reason` on standard error and exits with
    /// `ApplicationExitStatus.blockedByPolicy` (77); an implementation that returns lets
    /// ProctorKit exit with that status.
    func applicationWasBlocked(_ application: Application, reason: String)
    /// `PolicyApplication`: the app's managed data is about to be erased (an administrator's
    /// wipe, or retirement). Close what is open in the declared data directories; when this
    /// returns ProctorKit removes them and acknowledges the directive to proctord.
    func applicationShouldWipeData(_ application: Application, directive: WipeDirective)
    /// `PolicyApplication`: the app's compliance with `compliance.minVersion` changed — at
    /// launch when it is not compliant, then on every change proctord pushes. `.warning`
    /// (`onViolation: warn`): the app keeps running; tell the user to update. `.violation`:
    /// `applicationWasBlocked(_:reason:)` follows (after the wipe, for `onViolation: wipe`).
    func application(_ application: Application, complianceDidChange compliance: ComplianceState)
    /// `PolicyApplication`: proctord sent a policy version not seen before — at launch, before
    /// didFinishLaunching, and on every change while running — and its rules are in force.
    /// The answer is sent to proctord as the acknowledgement of that version (shown by
    /// `proctorctl app ID`); the default is `.applied`. Rules that cannot be compiled are
    /// acknowledged `.error` by ProctorKit without asking.
    func application(_ application: Application, didReceivePolicyChange change: PolicyChange) -> PolicyAcknowledgement
    /// `PolicyApplication`: a policy change can only take effect when the process starts again
    /// — today an export rule enforced by the kernel (`dlp.fileExport.enforcement: "kernel"`)
    /// that now allows more: the kernel's confinement only tightens while the process runs.
    /// Until the restart the stricter rule stays in force. Like Intune's `restartApplication`,
    /// the app chooses the moment (save, then exit; systemd's `Restart=` or the user starts it
    /// again). The default does nothing; ProctorKit has already written `reason` on standard error.
    func applicationShouldRestart(_ application: Application, reason: String)
}

extension ApplicationDelegate {
    public func application(_ application: Application,
                            didFinishLaunchingWithOptions launchOptions: [Application.LaunchOptionsKey: Any]?) -> Bool {
        true
    }
    public func applicationDidBecomeActive(_ application: Application) {}
    public func applicationWillResignActive(_ application: Application) {}
    public func applicationDidEnterBackground(_ application: Application) {}
    public func applicationWillEnterForeground(_ application: Application) {}
    public func applicationWillTerminate(_ application: Application) {}
    public func applicationDidReceiveMemoryWarning(_ application: Application) {}
    public func applicationUserDidChange(_ application: Application) {}
    public func application(_ application: Application, didReceiveRemoteNotification userInfo: [String: JSONValue]) {}
    public func applicationManagedConfigurationDidChange(_ application: Application) {}
    public func applicationDidReceiveReload(_ application: Application) {}
    public func applicationWasBlocked(_ application: Application, reason: String) {
        exit("blocked by policy: \(reason)", status: .blockedByPolicy)
    }
    public func applicationShouldWipeData(_ application: Application, directive: WipeDirective) {}
    public func application(_ application: Application, complianceDidChange compliance: ComplianceState) {}
    public func application(_ application: Application, didReceivePolicyChange change: PolicyChange) -> PolicyAcknowledgement {
        .applied
    }
    public func applicationShouldRestart(_ application: Application, reason: String) {}
}
