import Dispatch
import Foundation
public import JSONCore
import ProctorCrypto
public import ProctorPolicy

/// The policy-aware application class, AppConnect-style: name it in `NSPrincipalClass`
/// (`ProctorKit.PolicyApplication`) or pass it to `ApplicationMain`, and the app is managed
/// by proctord with no other change.
///
/// Before didFinishLaunching reaches the delegate it connects to the Agent socket
/// (`$PROCTOR_AGENT_SOCKET`, else `/run/proctor/io.proctor.Agent`), registers with the app id
/// (`PolicyApplication.appID`, else `ProctorAppID` in the Info.plist) and the version
/// (`CFBundleShortVersionString`), and acts on the answer:
/// - `authorized` and a granted `launch` verdict (the Register reply carries it): launch
///   proceeds — with `onViolation: warn`, `compliance` is `.warning` and the delegate hears
///   `application(_:complianceDidChange:)` first;
/// - `blocked`, a denied launch, or a registration proctord refused: the delegate never sees
///   didFinishLaunching; it gets `applicationWasBlocked(_:reason:)` and the process ends with
///   `ApplicationExitStatus.blockedByPolicy`;
/// - proctord cannot be reached: the app launches from the last view proctord signed for it
///   (`OfflineViewCache`) when that verifies and is younger than `compliance.offlineGraceSeconds`,
///   and reconnects in the background; without one the process ends with
///   `ApplicationExitStatus.agentUnavailable` (see `PolicyApplication+Offline.swift`);
/// - `retired`, a wipe directive or a launch denied with `onViolation: wipe`:
///   `applicationShouldWipeData(_:directive:)`, then the declared data directories are removed
///   (see `ProctorDataDirectories`) and a directive acknowledged; a retired or violating app
///   is then blocked.
///
/// While it runs: lifecycle events are reported to proctord in the order the delegate gets
/// them (from a thread of its own); pushed changes update `ManagedConfiguration.shared` and
/// `DataGuard.shared` live and are acknowledged (`ReportFeedback` key `policy`, with the
/// delegate's `PolicyAcknowledgement`); remote
/// notifications reach the delegate; proctord's launch verdict, decided again on every
/// policy change, is enforced as at launch (a raised `minVersion` stops a running app); when proctord goes away the cached rules stay in force
/// for `compliance.offlineGraceSeconds` while the SDK reconnects with capped backoff, and past
/// `compliance.offlineWipeSeconds` the managed data is wiped.
open class PolicyApplication: Application {
    /// The app id; when nil, `ProctorAppID` of the Info.plist. Set before `ApplicationMain`.
    /// (These settings in code take precedence over the Info.plist.)
    public static var appID: String?
    /// The app's version; when nil, `CFBundleShortVersionString` of the Info.plist.
    public static var appVersion: String?
    /// The data directories a wipe removes; when nil, `ProctorDataDirectories` of the Info.plist.
    public static var dataDirectories: [String]?
    /// How to reach proctord; nil means the Agent socket (`VarlinkAgentTransport.fromEnvironment`).
    /// `ProctorKitTesting` sets an in-process agent here.
    public static var agentTransport: (any AgentTransport)?

    static weak var running: PolicyApplication?

    /// The rules in force for this app, answered locally.
    public let dataGuard: DataGuard
    /// This app's managed configuration.
    public let managedConfiguration: ManagedConfiguration

    /// The app's state as proctord last said; nil before registration.
    public private(set) var policyState: AppState?
    /// The version of the policy proctord last sent; nil before registration.
    public private(set) var policyVersion: String?
    /// Whether the app's version meets `compliance.minVersion`, as proctord last decided
    /// (again on every policy change); `compliant` before registration.
    public private(set) var compliance: ComplianceState = .compliant

    var settings: PolicyAppSettings?
    private var link: AgentLink?
    private(set) var reporter: EventReporter?
    private var pendingSubscription: AgentLink.Registration?
    private var handledDirectives: Set<String> = []
    private var acknowledgedPolicyVersion: String?
    private var launched = false
    private var wipedByPolicy = false
    /// The data key `ProtectedStorage.shared` encrypts with, once proctord released it.
    private var keySource: ProctordKeySource?
    /// Where the views proctord signs are kept for an offline launch; nil without a state folder.
    var viewCache: OfflineViewCache?
    /// Launched from the cached view: the subscription starts by reconnecting, and the data key
    /// comes from proctord once it answers.
    var launchedOffline = false
    /// `compliance.offlineGraceSeconds` and `offlineWipeSeconds` of the view in force.
    var offlineTimers: (graceSeconds: Int, wipeSeconds: Int?) = (86_400, nil)
    /// Counts connectivity changes, so a pending offline wipe knows it was overtaken.
    var connectivityEpoch = 0
    /// The Landlock layers `dlp.fileExport.enforcement: "kernel"` put in force.
    var exportConfinement = ExportConfinement()

    public required init() {
        dataGuard = .shared
        managedConfiguration = .shared
        super.init()
    }

    /// Stores the app's own status for the administrator (shown by `proctorctl app ID`),
    /// sent in the background; a newer entry replaces an older one with the same `key`.
    /// Keys are at most 100 characters and messages at most 1000; `data` is structured detail
    /// for tools (Android's KeyedAppState `data`), stored and shown as JSON.
    public func reportFeedback(key: String, severity: FeedbackSeverity, message: String, data: [String: JSONValue]? = nil) {
        reporter?.feedback(key: key, severity: severity, message: message, data: data)
    }

    /// `reportFeedback(key:severity:message:data:)` of the running PolicyApplication; nothing
    /// when there is none.
    public static func reportFeedback(key: String, severity: FeedbackSeverity, message: String, data: [String: JSONValue]? = nil) {
        running?.reportFeedback(key: key, severity: severity, message: message, data: data)
    }

    // MARK: Launch

    open override func prepareLaunch(options: [LaunchOptionsKey: Any]) async -> LaunchDecision {
        Self.running = self
        let settings: PolicyAppSettings
        do {
            settings = try PolicyAppSettings.resolve(info: Application.infoDictionary, appID: Self.appID,
                                                     version: Self.appVersion, dataDirectories: Self.dataDirectories,
                                                     infoPlistPath: Application.infoPlistPath)
        } catch {
            return blockLaunch(error.description)
        }
        self.settings = settings
        keySource = ProctordKeySource(appID: settings.appID)
        let transport = Self.agentTransport ?? VarlinkAgentTransport.fromEnvironment(ProcessInfo.processInfo.environment)
        let viewCache = OfflineViewCache.forApp(settings.appID, environment: ProcessInfo.processInfo.environment, transport: transport)
        self.viewCache = viewCache
        let link = AgentLink(transport: transport, appID: settings.appID, version: settings.version)
        let reporter = EventReporter(link: link)
        self.link = link
        self.reporter = reporter
        reporter.start()
        dataGuard.setDenialReporter { action, target, decision in
            var detail: [String: JSONValue] = ["action": .string(action.rawValue), "rule": .string(decision.rule),
                                               "reason": .string(decision.reason)]
            if let target { detail["target"] = .string(target) }
            reporter.event("dataActionDenied", detail: detail)
        }

        // The data key is asked for only when the launch may go on (proctord refuses it to a
        // blocked, retired or non-compliant app anyway).
        let outcome = await Self.offMain { () -> Result<LaunchAnswer, AgentLink.Failure> in
            do throws(AgentLink.Failure) {
                let registration = try link.register()
                let cacheProblem = viewCache?.keep(registration.update)
                guard registration.update.state == .authorized, registration.update.launch.allowed else {
                    return .success(LaunchAnswer(registration: registration, dataKey: nil, cacheProblem: cacheProblem))
                }
                return .success(LaunchAnswer(registration: registration,
                                             dataKey: Result { () throws(AgentLink.Failure) in try link.fetchDataKey(registration) },
                                             cacheProblem: cacheProblem))
            } catch {
                return .failure(error)
            }
        }
        let answer: LaunchAnswer
        switch outcome {
        case .failure(let failure) where failure.agentUnreachable:
            return launchOffline(settings, unreachable: "proctord could not be reached \(transportDescription(transport)) (\(failure))")
        case .failure(let failure):
            return blockLaunch("cannot register as \(settings.appID) with proctord (\(transportDescription(transport))): \(failure)")
        case .success(let launchAnswer):
            answer = launchAnswer
        }
        let registration = answer.registration
        if let problem = answer.cacheProblem { report(Diagnostic(message: problem)) }

        apply(registration.update)
        if let refusal = admit(registration.update, settings: settings) { return refusal }
        // After `apply`: a wipe it carried out forgot the previous key, and this one is already
        // the next generation (proctord destroyed the old one when the wipe was issued).
        configureProtectedStorage(settings, dataKey: answer.dataKey, offlineGraceSeconds: registration.update.offlineGraceSeconds)
        // Last before the delegate's code runs, so none of it runs unconfined.
        enforceExportRule(registration.update, settings: settings)
        pendingSubscription = registration
        return .proceed
    }

    /// What registering at launch found out.
    private struct LaunchAnswer: Sendable {
        let registration: AgentLink.Registration
        let dataKey: Result<(key: SymmetricKey, generation: Int), AgentLink.Failure>?
        /// Why the signed view could not be cached, if it could not.
        let cacheProblem: String?
    }

    /// Whether the app may run on `update` (applied already), as proctord's state and launch
    /// verdict say; the refusal (after telling the delegate) when it may not.
    func admit(_ update: AgentUpdate, settings: PolicyAppSettings) -> LaunchDecision? {
        switch update.state {
        case .blocked:
            return blockLaunch("the administrator blocked \(settings.appID)")
        case .retired:
            reporter?.flush(timeout: .seconds(2))
            return blockLaunch("\(settings.appID) is retired; its managed data was wiped")
        case .authorized:
            break
        }
        updateCompliance(update.launch)
        if let refusal = enforce(update.launch, settings: settings) {
            reporter?.flush(timeout: .seconds(2))
            return blockLaunch(refusal)
        }
        return nil
    }

    /// `ProtectedStorage.shared` keeps its files in the first data directory (created, 0700, if
    /// missing) with the key proctord released; without one it stays unconfigured.
    func configureProtectedStorage(_ settings: PolicyAppSettings,
                                           dataKey: Result<(key: SymmetricKey, generation: Int), AgentLink.Failure>?,
                                           offlineGraceSeconds: Int) {
        guard let directory = settings.dataDirectories.first, let keySource else { return }
        switch dataKey {
        case .success(let granted):
            if let failure = keySource.install(granted.key, generation: granted.generation, offlineGraceSeconds: offlineGraceSeconds) {
                report(Diagnostic(message: "cannot keep the data key in the kernel keyring for offline use: \(failure)"))
            }
        case .failure(let failure):
            report(Diagnostic(message: "proctord did not release the data key: \(failure)"))
        case nil:
            break
        }
        do {
            let path = try DataWiper.forCurrentProcess(environment: ProcessInfo.processInfo.environment).usablePath(directory).get()
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            try ProtectedStorage.shared.configure(dataDirectory: path, keySource: keySource)
        } catch {
            report(Diagnostic(message: "protected storage is unavailable in \(directory): \(error)"))
        }
    }

    /// After a wipe while running: the next key generation, fetched on a connection of its own
    /// (the launch connection carries the subscription).
    func fetchNextDataKey(offlineGraceSeconds: Int) {
        guard let link, let keySource else { return }
        let thread = Thread {
            do throws(AgentLink.Failure) {
                let granted = try link.fetchDataKey()
                keySource.install(granted.key, generation: granted.generation, offlineGraceSeconds: offlineGraceSeconds)
            } catch {
                DispatchQueue.main.async {
                    MainActor.assumeIsolated {
                        PolicyApplication.running?.report(Diagnostic(message: "proctord did not release the next data key: \(error)"))
                    }
                }
            }
        }
        thread.name = "ProctorKit.DataKey"
        thread.start()
    }

    open override func didFinishLaunching(options: [LaunchOptionsKey: Any]) -> Bool {
        reporter?.event("didFinishLaunching")
        let ready = super.didFinishLaunching(options: options)
        launched = true
        // Pushes start after the delegate finished launching, so nothing reaches it before.
        if ready, pendingSubscription != nil || launchedOffline, let link {
            let registration = pendingSubscription
            pendingSubscription = nil
            startSubscription(link: link, from: registration)
        }
        return ready
    }

    func blockLaunch(_ reason: String) -> LaunchDecision {
        delegate?.applicationWasBlocked(self, reason: reason)
        return .refuse(reason: "blocked by policy: \(reason)", exitStatus: .blockedByPolicy)
    }

    func transportDescription(_ transport: any AgentTransport) -> String {
        (transport as? VarlinkAgentTransport).map { "at \($0.path)" } ?? "through \(type(of: transport))"
    }

    /// Runs blocking work on a thread of its own and resumes with its result.
    private static func offMain<Result: Sendable>(_ work: @escaping @Sendable () -> Result) async -> Result {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: work()) }
            thread.name = "ProctorKit.Registration"
            thread.start()
        }
    }

    // MARK: Pushes

    private func startSubscription(link: AgentLink, from registration: AgentLink.Registration?) {
        let dataGuard = self.dataGuard
        let viewCache = self.viewCache
        let thread = Thread {
            link.maintainSubscription(from: registration, onUpdate: { update in
                // Kept before the update is applied: the signed view carries no wipe directive,
                // so a crash in between leaves nothing undone offline.
                let cacheProblem = viewCache?.keep(update)
                DispatchQueue.main.async {
                    MainActor.assumeIsolated {
                        if let cacheProblem { PolicyApplication.running?.report(Diagnostic(message: cacheProblem)) }
                        PolicyApplication.running?.received(update)
                    }
                }
            }, onConnectivity: { change in
                if case .lost = change { dataGuard.connectionLost() }
                DispatchQueue.main.async { MainActor.assumeIsolated { PolicyApplication.running?.connectivityChanged(change) } }
            })
        }
        thread.name = "ProctorKit.Subscription"
        thread.start()
    }

    private func connectivityChanged(_ change: AgentLink.Connectivity) {
        connectivityEpoch += 1
        switch change {
        case .lost(let why):
            report(Diagnostic(message: "lost proctord (\(why)); enforcing the cached policy and reconnecting"))
            scheduleOfflineWipe(afterSeconds: offlineTimers.wipeSeconds)
        case .restored:
            report(Diagnostic(message: "reconnected to proctord"))
            restoredAfterOfflineLaunch()
        }
    }

    private func received(_ update: AgentUpdate) {
        apply(update)
        if update.reason == .notification, let notification = update.notification {
            didReceiveRemoteNotification(notification)
        }
        guard let settings else { return }
        switch update.state {
        case .blocked: endBlocked("the administrator blocked \(settings.appID)")
        case .retired: endBlocked("\(settings.appID) was retired; its managed data was wiped")
        case .authorized:
            updateCompliance(update.launch)
            if let refusal = enforce(update.launch, settings: settings) { endBlocked(refusal) }
            enforceExportRule(update, settings: settings)
        }
    }

    /// Tells the delegate and ends the process with `blockedByPolicy`, once the reports left.
    private func endBlocked(_ reason: String) -> Never {
        delegate?.applicationWasBlocked(self, reason: reason)
        reporter?.flush(timeout: .seconds(2))
        exit("blocked by policy: \(reason)", status: .blockedByPolicy)
    }

    // MARK: Compliance

    /// Takes proctord's latest launch verdict as the compliance state; the delegate hears a
    /// change (and, at launch, any state but compliant).
    private func updateCompliance(_ launch: Decision) {
        let state = ComplianceState(launch)
        guard state != compliance else { return }
        compliance = state
        delegate?.application(self, complianceDidChange: state)
    }

    /// Carries out a denied launch verdict — for `onViolation: wipe` the managed data goes
    /// first, as on retirement — and returns why the app may not run; nil when it may
    /// (`warn` included).
    private func enforce(_ launch: Decision, settings: PolicyAppSettings) -> String? {
        guard !launch.allowed else { return nil }
        if launch.violation == .wipe, !wipedByPolicy {
            wipedByPolicy = true
            wipe(WipeDirective(id: nil, issuedAt: nil, cause: .complianceViolation), settings: settings)
        }
        return launch.reason.isEmpty ? "proctord denied the launch" : launch.reason
    }

    /// Puts an update in force: rules, configuration, acknowledgement, wipes.
    func apply(_ update: AgentUpdate) {
        guard let settings else { return }
        policyState = update.state
        policyVersion = update.policyVersion
        offlineTimers = (update.offlineGraceSeconds, update.offlineWipeSeconds)
        installRules(update, appID: settings.appID)

        if managedConfiguration.replace(with: update.config), launched {
            NotificationCenter.default.post(name: ManagedConfiguration.didChangeNotification, object: managedConfiguration)
            managedConfigurationDidChange()
        }

        var wiped = false
        for directive in update.directives {
            guard let id = directive.id, !handledDirectives.contains(id) else { continue }
            handledDirectives.insert(id)
            wipe(directive, settings: settings)
            wiped = true
        }
        if wiped, launched, update.state == .authorized { fetchNextDataKey(offlineGraceSeconds: update.offlineGraceSeconds) }
        // A retired app's data goes once, whether or not a directive already took it.
        if update.state == .retired, !wipedByPolicy {
            wipedByPolicy = true
            if !wiped { wipe(WipeDirective(id: nil, issuedAt: nil, cause: .retired), settings: settings) }
        }
    }

    private func installRules(_ update: AgentUpdate, appID: AppID) {
        let isNew = update.policyVersion != acknowledgedPolicyVersion || update.reason == .policy
        do {
            dataGuard.install(try update.compile(for: appID), for: appID, offlineGraceSeconds: update.offlineGraceSeconds)
            if isNew {
                let change = PolicyChange(version: update.policyVersion, configuration: update.config)
                acknowledge(update.policyVersion, delegate?.application(self, didReceivePolicyChange: change) ?? .applied)
            }
        } catch {
            // The previous rules stay in force; the administrator hears why.
            report(Diagnostic(message: "cannot apply policy \(update.policyVersion) (\(error)), keeping the previous rules"))
            if isNew { acknowledge(update.policyVersion, .error(reason: "\(error)")) }
        }
        acknowledgedPolicyVersion = update.policyVersion
    }

    /// Tells proctord what became of policy `version` (`ReportFeedback` key `policy`).
    private func acknowledge(_ version: String, _ acknowledgement: PolicyAcknowledgement) {
        let message = switch acknowledgement {
        case .applied: "policy \(version) applied"
        case .error(let reason): "policy \(version) not applied: \(reason)"
        case .unsupported(let reason): "policy \(version) unsupported: \(reason)"
        }
        reporter?.feedback(key: "policy", severity: acknowledgement == .applied ? .info : .error,
                           message: String(message.prefix(1000)),
                           data: ["version": .string(version), "result": .string(acknowledgement.result)])
    }

    func wipe(_ directive: WipeDirective, settings: PolicyAppSettings) {
        delegate?.applicationShouldWipeData(self, directive: directive)
        keySource?.forget()
        let outcome = DataWiper.forCurrentProcess(environment: ProcessInfo.processInfo.environment)
            .wipe(settings.dataDirectories, keepingDirectories: !exportConfinement.layers.isEmpty)
        for refused in outcome.refused {
            report(Diagnostic(message: "refusing to wipe \(refused.path): \(refused.reason)"))
        }
        for failed in outcome.failed {
            report(Diagnostic(message: "could not wipe \(failed.path): \(failed.reason)"))
        }
        let message = String(outcome.summary.prefix(1000))
        if let id = directive.id {
            reporter?.acknowledgeWipe(id, completed: outcome.succeeded, message: message)
        } else {
            let cause = switch directive.cause {
            case .complianceViolation: "compliance violation: "
            case .offline: "offline past offlineWipeSeconds: "
            case .retired, .administrator: "retired: "
            }
            reporter?.feedback(key: "wipe", severity: outcome.succeeded ? .info : .error, message: cause + message)
        }
    }

    // MARK: Lifecycle events, reported in the order the delegate receives them

    open override func didBecomeActive() { reporter?.event("didBecomeActive"); super.didBecomeActive() }
    open override func willResignActive() { reporter?.event("willResignActive"); super.willResignActive() }
    /// The process stops (SIGSTOP) when this returns, and the reporter's thread with it: the
    /// report is sent before, so proctord learns of it when it happens, not after SIGCONT
    /// (bounded, and it carries its own time if proctord is slow or away).
    open override func didEnterBackground() {
        reporter?.event("didEnterBackground")
        super.didEnterBackground()
        reporter?.flush(timeout: .milliseconds(500))
    }
    open override func willEnterForeground() { reporter?.event("willEnterForeground"); super.willEnterForeground() }
    open override func didReceiveMemoryWarning() { reporter?.event("didReceiveMemoryWarning"); super.didReceiveMemoryWarning() }
    open override func userDidChange() { reporter?.event("userDidChange"); super.userDidChange() }
    open override func didReceiveReload() { reporter?.event("didReceiveReload"); super.didReceiveReload() }
    open override func didReceiveRemoteNotification(_ userInfo: [String: JSONValue]) {
        reporter?.event("didReceiveRemoteNotification")
        super.didReceiveRemoteNotification(userInfo)
    }
    open override func managedConfigurationDidChange() {
        reporter?.event("managedConfigurationDidChange")
        super.managedConfigurationDidChange()
    }
    open override func willTerminate() {
        reporter?.event("willTerminate")
        super.willTerminate()
        // The process exits when this returns: give the queued reports a moment to leave.
        reporter?.flush(timeout: .milliseconds(500))
    }
}
