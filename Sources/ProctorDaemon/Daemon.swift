import Glibc
import JSONCore
import LinuxIO
import ProctorPolicy
import ProctorStore
import SystemdKit
import Varlink

/// proctord: one event loop that owns the policy, the sessions, the state store and both
/// Varlink sockets. Every member is used from the loop's thread only (the main thread).
final class Daemon {
    static let version = ProctorRelease.version

    let configuration: DaemonConfiguration
    let loop: EventLoop
    let logger: Logger
    let notifier = SystemdNotifier()
    let store: StateStore
    let adminGroupID: UInt32?
    let startedAt = Clock.now()
    let startedMonotonic = Clock.monotonicMicroseconds()

    /// The last `policy.d` that loaded; kept so that an applied bundle overlays it even
    /// after a later reload failed.
    var directory: LoadedPolicy?
    var bundle: (policy: Policy, record: BundleRecord)?
    var active: ActivePolicy
    var lastReload: ReloadOutcome?

    var sessionsByApp: [AppID: [String: AgentSession]] = [:]
    /// Apps that may have wipe directives pending (a superset: an entry is dropped when a
    /// look-up finds none), so answering the others costs no query — a push reaches
    /// every subscriber.
    var appsWithPendingWipes: Set<AppID> = []
    var sessionCount = 0
    /// Counts changes of the set of managed apps, so each session is sent the set only anew.
    var managedAppsGeneration = 0
    var decisionsAllowed = 0
    var decisionsDenied = 0
    let events = EventFeed()

    private var lock: LockFile?
    private var agentServer: VarlinkServer<ConnectionContext>?
    private var adminServer: VarlinkServer<ConnectionContext>?
    private var reportedDroppedLogs = 0
    private var statusUpdatePending = false

    /// Sets everything up short of serving: directories, lock, store, policy.
    init(configuration: DaemonConfiguration, loop: EventLoop, logger: Logger) throws(StartupError) {
        self.configuration = configuration
        self.loop = loop
        self.logger = logger
        adminGroupID = (try? UserDatabase.groupID(named: configuration.adminGroup)).flatMap { $0 }

        try Self.makeDirectory(configuration.runtimeDirectory, mode: 0o755)
        try Self.makeDirectory(configuration.stateDirectory, mode: 0o700)
        do {
            lock = try LockFile.acquire(path: configuration.lockPath)
        } catch {
            throw StartupError(message: "proctord is already running on \(configuration.runtimeDirectory) (\(error))",
                               errno: EEXIST)
        }

        do {
            var storeConfiguration = StateStore.Configuration()
            storeConfiguration.historyLimit = configuration.historyLimit
            store = try StateStore.open(directory: configuration.stateDirectory, configuration: storeConfiguration,
                                        now: Clock.now())
        } catch {
            throw StartupError(message: "cannot open the state database in \(configuration.stateDirectory): \(error)",
                               errno: EIO)
        }

        let now = Clock.now()
        var reloadProblems: [PolicyProblem] = []
        do {
            directory = try PolicyDirectory.load(configuration.policyDirectory)
        } catch {
            reloadProblems = error.problems
        }
        do {
            appsWithPendingWipes = try store.appsWithPendingWipes()
            if let record = try store.currentBundle() {
                bundle = (try Policy.parse(Array(record.canonicalJSON.utf8), source: "applied bundle \(record.version)"), record)
            }
        } catch {
            throw StartupError(message: "the applied policy in the state database cannot be read: \(error)", errno: EIO)
        }
        guard directory != nil || bundle != nil else {
            let summary = reloadProblems.map(\.description).joined(separator: "; ")
            throw StartupError(message: "no valid policy: \(summary)", errno: EINVAL, isConfigurationError: true)
        }
        active = ActivePolicy(directory: directory, bundle: bundle?.policy, bundleVersion: bundle?.record.version,
                              loadedAt: now)
        if !reloadProblems.isEmpty {
            lastReload = ReloadOutcome(at: now, problems: reloadProblems)
        }

        if let recovery = store.recoveredCorruption {
            log(.stateDatabaseCorrupt, "State database was corrupt and was moved aside: \(recovery.reason)",
                [("MOVED_TO", recovery.movedTo)])
        }
        if let lastReload, !lastReload.ok {
            logReloadFailure(lastReload)
        }
        if store.isReadOnly {
            // Said now, not at the first apply or wipe that fails, maybe days later.
            log(.storageFailure, "State storage is read-only: \(configuration.stateDirectory) cannot be written, so applied "
                + "policies, wipes and app inventory cannot be recorded until it is; decisions go on",
                [("STATE_DIRECTORY", configuration.stateDirectory)])
        }
        pruneIdentityPins()
    }

    // MARK: Serving

    /// Takes the sockets (from systemd, else binds them), announces readiness and runs the
    /// loop until SIGTERM or SIGINT.
    func serve() throws(StartupError) {
        // Closing lets SQLite fold its write-ahead log into state.db and remove it, so a
        // stopped daemon leaves one self-contained file (what an administrator copies).
        defer { store.close() }
        let (agentSocket, adminSocket) = try openSockets()
        let agentService = VarlinkService<ConnectionContext>(vendor: "Proctor", product: "proctord",
                                                             version: Self.version, url: "https://proctor.invalid/")
        let adminService = VarlinkService<ConnectionContext>(vendor: "Proctor", product: "proctord",
                                                             version: Self.version, url: "https://proctor.invalid/")
        do {
            try agentService.addInterface(try Interfaces.text(of: "io.proctor.Agent"), methods: agentMethods())
            try adminService.addInterface(try Interfaces.text(of: "io.proctor.Admin"), methods: adminMethods(),
                                          admission: Self.admitAdministrators)
        } catch {
            throw StartupError(message: "interface definitions: \(error)", errno: EINVAL)
        }
        do {
            agentServer = try makeServer(agentSocket, service: agentService, name: "agent",
                                         maxMessageBytes: configuration.maxMessageBytes)
            // Admin calls carry whole policy documents; only root and the admin group connect.
            adminServer = try makeServer(adminSocket, service: adminService, name: "admin",
                                         maxMessageBytes: PolicyLimits.maxRequestBytes)
        } catch {
            throw StartupError(message: "cannot serve the sockets: \(error)", errno: error.rawValue)
        }
        try startWatchdog()

        log(.ready, "proctord is ready with policy \(active.version)", policyFields())
        notify { try $0.ready(status: statusLine()) }
        do {
            try loop.run()
        } catch {
            throw StartupError(message: "event loop failed: \(error)", errno: error.rawValue)
        }
    }

    /// Ends the loop (SIGTERM, SIGINT).
    func stop(signal: CInt) {
        notify { try $0.stopping(status: "Stopping on signal \(signal)") }
        log(.stopping, "proctord is stopping on signal \(signal)", [])
        agentServer?.close()
        adminServer?.close()
        loop.stop()
    }

    private func openSockets() throws(StartupError) -> (FileDescriptor, FileDescriptor) {
        let handed: [String: [CInt]]
        do {
            handed = try ListenedSockets.receive()
        } catch {
            throw StartupError(message: "socket activation: \(error)", errno: EINVAL)
        }
        if !handed.isEmpty {
            guard let agent = handed["agent"]?.first, let admin = handed["admin"]?.first else {
                throw StartupError(message: "systemd handed sockets named \(handed.keys.sorted()), expected 'agent' and 'admin'",
                                   errno: EINVAL)
            }
            return (FileDescriptor(rawValue: agent), FileDescriptor(rawValue: admin))
        }
        do {
            let agent = try UnixSocket.listen(path: configuration.agentSocketPath, mode: 0o666)
            let admin = try UnixSocket.listen(path: configuration.adminSocketPath, mode: 0o660,
                                              group: configuration.adminGroup)
            return (agent, admin)
        } catch {
            throw StartupError(message: "\(error)", errno: EADDRINUSE)
        }
    }

    private func makeServer(_ socket: FileDescriptor, service: VarlinkService<ConnectionContext>,
                            name: String, maxMessageBytes: Int) throws(Errno) -> VarlinkServer<ConnectionContext> {
        let server = try VarlinkServer(listening: socket, loop: loop, service: service,
                                       maxConnections: configuration.maxConnections,
                                       maxMessageBytes: maxMessageBytes,
                                       incompleteMessageTimeout: .seconds(configuration.idleMessageTimeoutSeconds))
        server.makeContext = { [unowned self] credentials in context(for: credentials) }
        server.onConnectionClosed = { [unowned self] context, _ in connectionClosed(context) }
        server.onConnectionRefused = { [unowned self] credentials in
            var fields: [(String, String)] = [("SOCKET", name)]
            if let credentials {
                fields += [(DaemonEventField.peerPID, String(credentials.pid)), (DaemonEventField.peerUID, String(credentials.uid))]
            }
            log(.clientLimitHit, "Refused a connection on the \(name) socket: \(configuration.maxConnections) connections are open",
                fields)
        }
        return server
    }

    private func context(for credentials: PeerCredentials) -> ConnectionContext {
        let peer = PeerIdentity(reading: credentials)
        return ConnectionContext(peer: peer, mayAdminister: IdentityCheck.mayAdminister(peer, adminGroupID: adminGroupID))
    }

    private func connectionClosed(_ context: ConnectionContext) {
        guard !context.sessions.isEmpty else { return }
        for session in context.sessions.values {
            sessionsByApp[session.appID]?[session.id] = nil
            if sessionsByApp[session.appID]?.isEmpty == true { sessionsByApp[session.appID] = nil }
            sessionCount -= 1
        }
        context.sessions.removeAll()
        updateStatus()
    }

    private func startWatchdog() throws(StartupError) {
        let interval: Duration?
        do {
            interval = try notifier.watchdogPingInterval()
        } catch {
            throw StartupError(message: "\(error)", errno: error.errno)
        }
        guard let interval else { return }
        // A repeating timer of the loop itself: a stuck loop stops the pings and systemd
        // restarts the daemon, which is the point of the watchdog.
        _ = loop.schedule(every: interval) { [unowned self] in
            notify { try $0.watchdogPing() }
            reportDroppedLogs()
        }
    }

    // MARK: Policy changes

    /// Re-reads `policy.d` (SIGHUP, `Admin.Reload`). An invalid directory leaves the
    /// policy in force untouched.
    @discardableResult
    func reload() -> ReloadOutcome {
        notify { try $0.reloading(status: "Reloading policy.d") }
        let now = Clock.now()
        let outcome: ReloadOutcome
        do {
            let loaded = try PolicyDirectory.load(configuration.policyDirectory)
            directory = loaded
            outcome = ReloadOutcome(at: now, problems: [])
            activate(ActivePolicy(directory: loaded, bundle: bundle?.policy, bundleVersion: bundle?.record.version,
                                  loadedAt: now))
            log(.reloadSucceeded, "Reloaded policy.d: policy \(active.version) in force", policyFields())
        } catch {
            outcome = ReloadOutcome(at: now, problems: error.problems)
            logReloadFailure(outcome)
        }
        lastReload = outcome
        notify { try $0.ready(status: statusLine()) }
        return outcome
    }

    private func logReloadFailure(_ outcome: ReloadOutcome) {
        let errors = outcome.problems.map(\.description).joined(separator: "\n")
        log(.reloadFailed, "Policy reload failed, policy \(active.version) stays in force: "
            + "\(outcome.problems.count) problem(s): \(outcome.problems.first?.description ?? "")",
            policyFields() + [(DaemonEventField.errors, errors)])
    }

    /// Makes `policy` the one in force and tells every subscriber whose app's view changed.
    /// A change of the set of managed apps concerns every app: its copies and shares towards
    /// the others are decided against that set (the SDK decides them locally).
    func activate(_ policy: ActivePolicy) {
        let managedAppsChanged = active.compiled.managedAppIDs != policy.compiled.managedAppIDs
        if managedAppsChanged { managedAppsGeneration += 1 }
        active = policy
        for (appID, sessions) in sessionsByApp {
            let view = AppView(of: appID, in: policy.compiled)
            for session in sessions.values where session.subscription != nil && (managedAppsChanged || session.lastView != view) {
                sendUpdate(to: session, reason: "policy", view: view)
            }
        }
        events.emit(kind: "policy", appID: nil, data: ["version": .string(policy.version), "sha256": .string(policy.sha256)])
        updateStatus()
    }

    /// A `Subscribe` reply carrying the app's complete current state.
    func sendUpdate(to session: AgentSession, reason: String, view: AppView?, notification: JSONValue? = nil) {
        guard let subscription = session.subscription else { return }
        guard subscription.isConnected else {
            session.subscription = nil
            return
        }
        var fields = subscriptionFields(for: session, view: view)
        fields["reason"] = .string(reason)
        if let notification { fields["notification"] = notification }
        session.lastView = view
        subscription.send(fields)
    }

    /// What `Register` and `Subscribe` tell an app about itself. An app that left the
    /// policy is told it is retired. `managedApps` lets the SDK decide copies and shares
    /// towards other apps from its cache; it grows with the policy, so a session gets it
    /// only when the set changed since it last got it (a push to many sessions stays small).
    func subscriptionFields(for session: AgentSession, view: AppView?) -> [String: JSONValue] {
        var fields = view?.fields ?? ["state": "retired", "config": [:], "dlp": [:], "compliance": [:]]
        fields["policyVersion"] = .string(active.version)
        if session.managedAppsGeneration != managedAppsGeneration {
            session.managedAppsGeneration = managedAppsGeneration
            fields["managedApps"] = .array(active.compiled.managedAppIDs.map(JSONValue.string))
        }
        fields["directives"] = .array(deliverPendingWipes(to: session.appID))
        return fields
    }

    /// The app's pending wipe directives, marked delivered.
    func deliverPendingWipes(to appID: AppID) -> [JSONValue] {
        guard appsWithPendingWipes.contains(appID) else { return [] }
        do {
            let now = Clock.now()
            let pending = try store.pendingWipes(appID: appID)
            if pending.isEmpty { appsWithPendingWipes.remove(appID) }
            return pending.map { directive in
                if directive.deliveredAt == nil { _ = try? store.markDelivered(id: directive.id, at: now) }
                return ["id": .string(directive.id), "issuedAt": .string(Clock.rfc3339(directive.issuedAt))]
            }
        } catch {
            logStorageFailure("reading pending wipes of \(appID)", error)
            return []
        }
    }

    // MARK: Logging and status

    func log(_ kind: DaemonEvent, _ message: String, _ fields: [(String, String)]) {
        guard logger.isEnabled(kind.priority) else { return }
        logger.log(kind.event(message, fields))
    }

    func logStorageFailure(_ what: String, _ error: StoreError) {
        log(.storageFailure, "State storage failed while \(what): \(error)", [("STATE_DIRECTORY", configuration.stateDirectory)])
    }

    func policyFields() -> [(String, String)] {
        [(DaemonEventField.policyVersion, active.version), (DaemonEventField.policySHA256, active.sha256)]
    }

    func peerFields(_ peer: PeerIdentity) -> [(String, String)] {
        [(DaemonEventField.peerPID, String(peer.pid)), (DaemonEventField.peerUID, String(peer.uid)),
         (DaemonEventField.peerExecutable, peer.executable ?? "(unknown)")]
    }

    func statusLine() -> String {
        "Policy \(active.version): \(active.compiled.managedAppIDs.count) managed apps, \(sessionCount) sessions"
            + (lastReload?.ok == false ? "; last reload failed" : "")
    }

    /// Refreshes systemd's STATUS= line, at most twice a second: registrations come in
    /// bursts, and the line only needs to be current for a human reading it.
    func updateStatus() {
        guard notifier.isEnabled, !statusUpdatePending else { return }
        statusUpdatePending = true
        _ = loop.schedule(after: .milliseconds(500)) { [unowned self] in
            statusUpdatePending = false
            notify { try $0.status(statusLine()) }
        }
    }

    /// sd_notify failures are worth a line but never stop the daemon.
    func notify(_ send: (SystemdNotifier) throws -> Bool) {
        do {
            _ = try send(notifier)
        } catch {
            logger.log(LogEvent(DaemonEvent.storageFailure.messageID, .warning, "\(error), ignoring"))
        }
    }

    /// Says once per episode how many log messages the bounded queue had to drop.
    private func reportDroppedLogs() {
        let dropped = logger.droppedCount
        guard dropped > reportedDroppedLogs else { return }
        reportedDroppedLogs = dropped
        log(.logMessagesDropped, "\(dropped) log messages dropped in total: the journal could not keep up",
            [("DROPPED", String(dropped))])
    }

    private static func makeDirectory(_ path: String, mode: mode_t) throws(StartupError) {
        var components: [Substring] = []
        for component in path.split(separator: "/") {
            components.append(component)
            let partial = "/" + components.joined(separator: "/")
            if mkdir(partial, mode) != 0 && errno != EEXIST {
                throw StartupError(message: "cannot create \(partial): \(String(cString: strerror(errno)))", errno: errno)
            }
        }
    }
}

/// Why proctord could not start: one line for the admin, and the errno for systemd.
struct StartupError: Error, CustomStringConvertible {
    let message: String
    let errno: Int32
    /// Only the administrator can fix it (the policy): restarting would fail the same way.
    var isConfigurationError = false
    var description: String { message }

    /// `EX_CONFIG` (78) for a configuration error, which the unit's
    /// `RestartPreventExitStatus=` exempts from `Restart=on-failure`; 1 otherwise.
    var exitStatus: Int32 { isConfigurationError ? 78 : 1 }
}
