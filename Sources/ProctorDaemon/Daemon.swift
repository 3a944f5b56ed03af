import Glibc
import JSONCore
import LinuxIO
import ProctorPolicy
import ProctorProtocol
import ProctorStore
import SystemdKit
import Varlink

/// proctord: one event loop that owns the policy, the sessions, the state store and both
/// Varlink sockets. Every member is used from the loop's thread only (the main thread);
/// policies are read and compiled on worker threads, which are handed plain values and
/// hand the result back to the loop (`offLoop`).
final class Daemon {
    static let version = ProctorRelease.version

    let configuration: DaemonConfiguration
    let loop: EventLoop
    let logger: Logger
    let notifier = SystemdNotifier()
    let store: StateStore
    /// The apps' data keys, wrapped by the machine key in `store`.
    let dataKeys: DataKeyVault
    let adminGroupID: UInt32?
    /// Whether each session's registering process still lives, for every call on the session
    /// (`AgentSession.isRegisteringProcess`).
    let processExits: ProcessExitWatch
    let startedAt = Clock.now()
    let startedMonotonic = Clock.monotonicMicroseconds()

    /// The last `policy.d` that loaded (`ActivePolicy.directory`).
    var directory: KeptDirectory? { active.directory }
    /// The identity of `directory`'s files as they were read (the `PolicySnapshot` key).
    var directoryIdentity: PolicyDirectoryIdentity?
    /// The `PolicySnapshot` in the state directory, as far as this daemon knows.
    var savedSnapshot: PolicySnapshot?
    var bundle: (policy: CanonicalPolicy, record: BundleRecord)?
    var lastReload: ReloadOutcome?
    /// The policy in force and the sessions, which `Daemon` feeds events and whose effects
    /// it carries out.
    let registry: AgentRegistry
    /// Signs every app view sent, for the apps' offline caches.
    let viewSigner: ViewSigner
    var active: ActivePolicy { registry.active }
    /// Decisions, refused registrations and storage failures since start (`DaemonCounters`).
    let counters = DaemonCounters()
    /// `Status`'s count of the known apps, kept up to date from memory (`appsKnown()`).
    var knownAppTally = KnownAppTally()
    /// The `Admin.Events` streams and the queue of events not yet in the store's history.
    let events: EventFeed
    /// Signed bundles and the MDM poll (Daemon+Fleet.swift).
    var fleet = FleetState()
    let fleetShared = FleetShared()
    /// What `fleetShared` reaches the daemon by.
    var fleetLink: DaemonLink?
    /// `/etc/machine-id`, which status documents carry ("" if it cannot be read).
    let machineID = Daemon.readMachineID()
    /// Checks every registration against the app's `match` block (`IdentityCheck`). Only
    /// `InProcessDaemon`, the test kit's agent, turns it off: its callers are the test's own
    /// process.
    var verifiesCallers = true
    /// Whether policy changes are read and compiled on the loop's thread instead of a worker
    /// (`offLoop`): only `SocketlessDaemon`, whose single caller waits for every change to
    /// finish anyway, for which the thread hops cost more than a small policy's compilation.
    var runsPolicyWorkInline = false
    /// Told of every report an app made and the daemon accepted (`ReportEvent`,
    /// `ReportFeedback`, `AcknowledgeWipe`), for `InProcessDaemon`.
    var onReport: ((AppID, any ProtocolMessage) -> Void)?

    private var lock: LockFile?
    private var agentServer: VarlinkServer<ConnectionContext>?
    private var adminServer: VarlinkServer<ConnectionContext>?
    private var reportedDroppedLogs = 0
    /// Refusals and denials are logged (refusals also told to `Events` subscribers) at most a
    /// burst per uid and window, each kind counted apart (`Daemon+LogLimits`).
    let logLimits: UnsafeMutablePointer<LogLimits> = {
        let limits = UnsafeMutablePointer<LogLimits>.allocate(capacity: 1)
        limits.initialize(to: LogLimits())
        return limits
    }()
    private var statusUpdatePending = false
    /// What logging a denial reads and changes (`logQueuedDenial`), behind a pointer: each
    /// access to a stored property of a class is a run-time exclusivity check.
    private struct LogHandOff {
        /// A wake-up of the log writer is scheduled (`scheduleLogWriterWake`).
        var writerWakeScheduled = false
        /// The newest event whose denial, if logged, is in `logBatch` or the logger's queue.
        var loggedThroughID: Int64 = 0
    }
    private let logHandOff: UnsafeMutablePointer<LogHandOff> = {
        let handOff = UnsafeMutablePointer<LogHandOff>.allocate(capacity: 1)
        handOff.initialize(to: LogHandOff())
        return handOff
    }()
    /// Deferred log events (a denial's) not yet handed to the logger: `logDeferred`.
    private let logBatch = Logger.Batch()
    /// How long a logged event may wait for the writer thread: short enough for someone
    /// reading the journal, long enough to write a busy loop's events in batches.
    static let logWriterWakeInterval = Duration.milliseconds(10)
    /// Reloads, applied bundles and rollbacks, one at a time (`PolicyUpdateQueue`).
    var policyUpdates = PolicyUpdateQueue()
    /// A write of the event history is scheduled (`Daemon+EventHistory`).
    var historyFlushScheduled = false
    /// The last write of the event history failed (logged once until one succeeds).
    var historyWriteFailing = false
    /// Dropped events already logged.
    var reportedDroppedEvents = 0
    /// Retirement and compliance shreds that failed, tried again on a timer (`Daemon+DataKeys`).
    var unfinishedShreds: [UnfinishedShred] = []
    var shredRetryScheduled = false
    /// What `PendingViolationShreds`' file holds.
    var recordedViolationShreds: [PendingViolationShred] = []

    /// Sets everything up short of serving: directories, lock, store, policy.
    init(configuration: DaemonConfiguration, loop: EventLoop, logger: Logger) throws(StartupError) {
        self.configuration = configuration
        self.loop = loop
        self.logger = logger
        adminGroupID = (try? UserDatabase.groupID(named: configuration.adminGroup)).flatMap { $0 }
        do {
            processExits = try ProcessExitWatch(loop: loop)
        } catch {
            throw StartupError(message: "cannot create the epoll instance that watches registered processes: \(error)",
                               errno: error.rawValue)
        }

        try Self.makeDirectory(configuration.runtimeDirectory, mode: 0o755)
        try Self.makeDirectory(configuration.stateDirectory, mode: 0o700)
        do {
            lock = try LockFile.acquire(path: configuration.lockPath)
        } catch {
            var failure = StartupError(message: "proctord is already running on \(configuration.runtimeDirectory) (\(error))",
                                       errno: EEXIST)
            if case .alreadyLocked(_, let holder) = error, holder == getpid() { failure.isLockedByThisProcess = true }
            throw failure
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
        let (machineKey, machineKeySource) = try DataKeyVault.loadMachineKey(configuration)
        dataKeys = DataKeyVault(machineKey: machineKey, store: store)
        viewSigner = try ViewSigner.load(configuration)

        do {
            (fleet.configuration, fleet.trustedKeys) = try Self.loadFleetSettings(configuration)
            let applied = try store.lastAppliedSerial()
            (fleet.lastAppliedSerial, fleet.lastAppliedAt) = (applied.map { Int($0.serial) }, applied?.appliedAt)
        } catch let error as FleetSetupError {
            throw StartupError(message: error.description, errno: EINVAL, isConfigurationError: true)
        } catch {
            throw StartupError(message: "the last applied bundle serial cannot be read: \(error)", errno: EIO)
        }
        fleetShared.lastAppliedSerial.store(fleet.lastAppliedSerial ?? 0, ordering: .relaxed)

        do {
            events = EventFeed(lastID: try store.lastEventID())
            logHandOff.pointee.loggedThroughID = events.lastID
        } catch {
            throw StartupError(message: "the event history in the state database cannot be read: \(error)", errno: EIO)
        }

        let now = Clock.now()
        let appsWithPendingWipes: Set<AppID>
        do {
            appsWithPendingWipes = try store.appsWithPendingWipes()
            if let record = try store.currentBundle() {
                let policy = try Policy.parse(Array(record.canonicalJSON.utf8), source: "applied bundle \(record.version)")
                bundle = (CanonicalPolicy(policy, readFrom: record), record)
            }
        } catch {
            throw StartupError(message: "the applied policy in the state database cannot be read: \(error)", errno: EIO)
        }
        // The compiled policy from the snapshot of the same files, bundle and build: no policy
        // file is read, parsed or compiled. Anything else works the policy out from its JSON.
        let snapshot = Self.restoreFromSnapshot(policyDirectory: configuration.policyDirectory, bundle: bundle,
                                                stateDirectory: configuration.stateDirectory, at: now)
        var reloadProblems: [PolicyProblem] = []
        var directory: LoadedPolicy?
        let active: ActivePolicy
        if let restored = snapshot.restored {
            (active, directoryIdentity, savedSnapshot) = (restored.active, restored.identity, restored.snapshot)
        } else {
            do {
                (directory, directoryIdentity) = try PolicyDirectory.loadIdentified(configuration.policyDirectory)
            } catch {
                reloadProblems = error.problems
            }
            guard directory != nil || bundle != nil else {
                let summary = reloadProblems.map(\.description).joined(separator: "; ")
                throw StartupError(message: "no valid policy: \(summary)", errno: EINVAL, isConfigurationError: true)
            }
            active = ActivePolicy(directory: directory.map(ActivePolicy.Directory.loaded), bundle: bundle?.policy,
                                  bundleVersion: bundle?.record.version, loadedAt: now)
        }
        registry = AgentRegistry(active: active, store: store, appsWithPendingWipes: appsWithPendingWipes,
                                 viewSigner: viewSigner)
        // The policy in force keeps policy.d compiled (`ActivePolicy.directory`): its parsed form
        // goes now, before the trim below. (Freed on a worker instead, it was still resident when
        // a loaded machine measured the idle daemon, or even after.)
        directory = nil
        if !reloadProblems.isEmpty {
            lastReload = ReloadOutcome(at: now, problems: reloadProblems)
        }

        if let recovery = store.recoveredCorruption {
            log(.stateDatabaseCorrupt, "State database was corrupt and was moved aside: \(recovery.reason); the wrapped data "
                + "keys were erased from the kept copy first (\(recovery.erasedHexRuns) run(s) of hex digits overwritten), "
                + "as no wipe can reach them there: its apps get new keys",
                [("MOVED_TO", recovery.movedTo), ("ERASED_HEX_RUNS", String(recovery.erasedHexRuns))])
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
        logMachineKeySource(machineKeySource)
        if let reason = snapshot.unusable { logUnusableSnapshot(reason) }
        if mayHaveSnapshot { saveSnapshot() }
        finishShredsOfTheLastRun()
        // A policy.d edited to retire an app while proctord was stopped counts as well.
        shredDataKeysOfRetiredApps()
        pruneIdentityPins()
        // Reading policy.d freed its files' bytes and the fragments merged: give those pages back
        // before an idle daemon is measured by what it keeps.
        Heap.returnFreePagesToKernel()
        events.onFirstPending = { [unowned self] in scheduleHistoryFlush(after: Self.historyFlushInterval) }
        // At once, not on the loop's next turn: one turn may read thousands of requests, and
        // the queue must not reach its bound while the store takes writes. (A failing store is
        // retried on its own schedule, `historyRetryInterval`.)
        events.onHalfFull = { [unowned self] in
            if !historyWriteFailing { flushEventHistory() }
        }
    }

    deinit {
        logHandOff.deallocate()
        logLimits.deinitialize(count: 1).deallocate()
    }

    // MARK: Serving

    /// Takes the sockets (from systemd, else binds them), announces readiness and runs the
    /// loop until SIGTERM or SIGINT.
    func serve() throws(StartupError) {
        defer { closeState() }
        let (agentSocket, adminSocket) = try openSockets()
        let (agentService, adminService) = try makeServices()
        do {
            let budget = OutputBudget(limit: configuration.outputBudgetBytes)
            agentServer = try makeServer(agentSocket, service: agentService, name: "agent",
                                         maxMessageBytes: configuration.maxMessageBytes, budget: budget)
            // Admin calls carry whole policy documents; only root and the admin group connect.
            adminServer = try makeServer(adminSocket, service: adminService, name: "admin",
                                         maxMessageBytes: PolicyLimits.maxRequestBytes, budget: budget)
        } catch {
            throw StartupError(message: "cannot serve the sockets: \(error)", errno: error.rawValue)
        }
        try startWatchdog()

        log(.ready, "proctord is ready with policy \(active.version)", policyFields())
        notify { try $0.ready(status: statusLine()) }
        let link = DaemonLink(self)
        fleetLink = link
        fleetShared.link = link
        startFleetThreads()
        defer { stopFleetThreads() }
        do {
            try loop.run()
        } catch {
            throw StartupError(message: "event loop failed: \(error)", errno: error.rawValue)
        }
    }

    /// The Agent and Admin services, each with its interface and handlers.
    func makeServices() throws(StartupError)
        -> (agent: VarlinkService<ConnectionContext>, admin: VarlinkService<ConnectionContext>)
    {
        let agentService = VarlinkService<ConnectionContext>(vendor: "Proctor", product: "proctord",
                                                             version: Self.version, url: "https://proctor.invalid/")
        let adminService = VarlinkService<ConnectionContext>(vendor: "Proctor", product: "proctord",
                                                             version: Self.version, url: "https://proctor.invalid/")
        do {
            try agentService.addInterface(try ProtocolInterfaces.text(of: Agent.interface), methods: agentMethods())
            addAgentDirectMethods(to: agentService)
            try adminService.addInterface(try ProtocolInterfaces.text(of: Admin.interface), methods: adminMethods(),
                                          admission: Self.admitAdministrators)
        } catch {
            throw StartupError(message: "interface definitions: \(error)", errno: EINVAL)
        }
        return (agentService, adminService)
    }

    /// Writes the events not yet in the history and closes the store and the lock, as a
    /// stop does. Closing lets SQLite fold its write-ahead log into state.db and remove it,
    /// so a stopped daemon leaves one self-contained file (what an administrator copies);
    /// without the lock, a daemon run in process can start again on the directory.
    func closeState() {
        flushEventHistory()
        handOffLogBatch()
        finishSnapshotWrite()
        store.close()
        lock = nil
    }

    /// Ends the loop (SIGTERM, SIGINT).
    func stop(signal: CInt) {
        notify { try $0.stopping(status: "Stopping on signal \(signal)") }
        log(.stopping, "proctord is stopping on signal \(signal)", [])
        agentServer?.close()
        adminServer?.close()
        stopFleetThreads()
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

    /// The agent socket: apps must register within `registerTimeoutSeconds`, and each
    /// message carries its sender's credentials (SO_PASSCRED/SO_PASSPIDFD), so `Register`
    /// can check the process that sent it (`VarlinkCall.sender`), not only the one that
    /// connected. Both sockets share one output budget and keep a reserve for root and
    /// the admin group.
    private func makeServer(_ socket: FileDescriptor, service: VarlinkService<ConnectionContext>,
                            name: String, maxMessageBytes: Int, budget: OutputBudget) throws(Errno) -> VarlinkServer<ConnectionContext> {
        let isAgent = name == "agent"
        let adminGroupID = self.adminGroupID
        let admission = UnixListener.Admission(
            maxConnectionsPerUID: configuration.maxConnectionsPerUID,
            reservedConnections: min(configuration.reservedConnections, configuration.maxConnections - 1),
            isPrivileged: { peer in Self.isPrivileged(peer, adminGroupID: adminGroupID) })
        let limits = VarlinkServer<ConnectionContext>.Limits(
            maxConnections: configuration.maxConnections, admission: admission,
            maxMessageBytes: maxMessageBytes,
            incompleteMessageTimeout: .seconds(configuration.idleMessageTimeoutSeconds),
            establishTimeout: isAgent ? .seconds(configuration.registerTimeoutSeconds) : nil)
        let server = try VarlinkServer(listening: socket, loop: loop, service: service, limits: limits,
                                       outputBudget: budget, receivesSenderCredentials: isAgent)
        server.makeContext = { [unowned self] connection in
            let context = context(for: connection.peer)
            context.onFirstSession = { connection.markEstablished() }
            context.setReceivesSenderProcesses = { connection.receiveSenderProcesses($0) }
            return context
        }
        server.onConnectionClosed = { [unowned self] context, _ in connectionClosed(context) }
        server.onConnectionRefused = { [unowned self] credentials, refusal in
            var fields: [(String, String)] = [("SOCKET", name), ("REASON", "\(refusal)")]
            if let credentials {
                guard logs(.refusedConnection, uid: credentials.uid) else { return }
                fields += [(DaemonEventField.peerPID, String(credentials.pid)), (DaemonEventField.peerUID, String(credentials.uid))]
            }
            log(.clientLimitHit, "Refused a connection on the \(name) socket: \(refusal)", fields)
        }
        return server
    }

    /// Root and the admin group (primary or supplementary): they may take the connections
    /// kept in reserve, and no per-uid limit applies to them.
    private static func isPrivileged(_ peer: PeerCredentials, adminGroupID: UInt32?) -> Bool {
        if peer.uid == 0 { return true }
        guard let adminGroupID else { return false }
        if peer.gid == adminGroupID { return true }
        return (try? ProcessIdentity.supplementaryGroups(ofPID: peer.pid))?.contains(adminGroupID) ?? false
    }

    private func context(for credentials: PeerCredentials) -> ConnectionContext {
        let peer = PeerIdentity(reading: credentials)
        return ConnectionContext(peer: peer, mayAdminister: IdentityCheck.mayAdminister(peer, adminGroupID: adminGroupID))
    }

    /// A client hung up: its sessions end.
    func connectionClosed(_ context: ConnectionContext) {
        guard !context.sessions.isEmpty else { return }
        for timer in context.sessions.values.compactMap(\.viewRefreshTimer) { loop.cancel(timer) }
        perform(registry.close(context.sessions.values))
        context.sessions.removeAll()
    }

    private func startWatchdog() throws(StartupError) {
        let interval: Duration?
        do {
            interval = try notifier.watchdogPingInterval()
        } catch {
            throw StartupError(message: "\(error)", errno: error.errno.rawValue)
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

    /// A version names one content (acknowledgements and `expectedVersion` name versions):
    /// policy.d re-read with the version of the one loaded before (`previous`) but other
    /// content is refused. Compares both policies when their versions agree, and hashes them
    /// (canonical form and SHA-256, for the message) only when they differ: run it off the
    /// loop. A reload of an unchanged policy.d, the common case, hashes nothing.
    static func reusedVersionProblem(_ loaded: LoadedPolicy, previous: KeptDirectory?) -> PolicyProblem? {
        guard let previous = previous?.compiled, previous.version.hasSameBytes(as: loaded.policy.version),
              !previous.isCompiled(from: loaded.policy) else { return nil }
        let sha256 = loaded.policy.sha256, previousSha256 = previous.policy.sha256
        guard sha256 != previousSha256 else { return nil }
        return PolicyProblem(path: JSONPath.root.appending("version"),
                             message: "version \(loaded.policy.version) was loaded before with other content (sha256 "
                                 + "\(previousSha256), now \(sha256)); give the changed policy a new version")
    }

    func logReloadFailure(_ outcome: ReloadOutcome) {
        let errors = outcome.problems.map(\.description).joined(separator: "\n")
        log(.reloadFailed, "Policy reload failed, policy \(active.version) stays in force: "
            + "\(outcome.problems.count) problem(s): \(outcome.problems.first?.description ?? "")",
            policyFields() + [(DaemonEventField.errors, errors)])
    }

    /// Makes `policy` the one in force and tells every subscriber whose app's view changed.
    func activate(_ policy: ActivePolicy) {
        perform(registry.activate(policy))
        shredDataKeysOfRetiredApps()
        if mayHaveSnapshot { saveSnapshot() }
    }

    /// Whether the policy in force can have a `PolicySnapshot`: `policy.d` is part of it and its
    /// files had settled when read. Checked here, in code that runs anyway, so that a start on
    /// files just written touches no page of the snapshot's code (idle RSS counts them).
    var mayHaveSnapshot: Bool { Self.mayHaveSnapshot(hasDirectory: directory != nil, directoryIdentity) }

    static func mayHaveSnapshot(hasDirectory: Bool, _ identity: PolicyDirectoryIdentity?) -> Bool {
        hasDirectory && identity?.isSettled == true
    }

    /// Carries out what the registry says must follow an event.
    func perform(_ effects: [AgentRegistry.Effect]) {
        // A push to many sessions of one app and user sends them equal updates, one after
        // the other: each distinct update is encoded once.
        var lastPush: (update: Agent.Subscribe.Reply, encoded: VarlinkEncodedReply)?
        for effect in effects {
            switch effect {
            case .push(let session, let update):
                guard let subscription = session.subscription else { continue }
                let encoded = lastPush.flatMap { $0.update == update ? $0.encoded : nil } ?? VarlinkEncodedReply(continuing: update.fields)
                lastPush = (update, encoded)
                subscription.send(encoded)
            case .wipeDelivered(let id, let time):
                do throws(StoreError) { _ = try store.markDelivered(id: id, at: time) } catch {
                    logStorageFailure("marking wipe directive \(id) delivered", error)
                }
            case .queuedNotificationsDelivered(let appID, let ids):
                do throws(StoreError) { try store.removeQueuedNotifications(ids: ids, appID: appID, now: Clock.now()) } catch {
                    logStorageFailure("removing the delivered queued notifications of \(appID)", error)
                }
            case .event(let kind, let appID, let data): events.emit(kind: kind, appID: appID, data: data)
            case .storageFailure(let what, let error): logStorageFailure(what, error)
            case .complianceWipe(let session, let verdict): shredDataKeysOnViolation(of: session, verdict: verdict)
            case .statusChanged: updateStatus()
            case .refreshViewLater(let session, let delay):
                if let timer = session.viewRefreshTimer { loop.cancel(timer) }
                session.viewRefreshTimer = loop.schedule(after: delay) { [unowned self, weak session] in
                    guard let session else { return }
                    session.viewRefreshTimer = nil
                    perform(registry.refreshView(of: session))
                }
            }
        }
    }

    // MARK: Logging and status

    /// Logs on the loop's thread. The writer thread is woken at most once per
    /// `logWriterWakeInterval`, not once per event: a denial costs the loop no system call
    /// and the machine no extra context switch (the logger wakes it sooner when its queue
    /// fills).
    func log(_ kind: DaemonEvent, _ message: String, _ fields: [(String, String)]) {
        guard logger.isEnabled(kind.priority) else { return }
        handOffLogBatch()  // after the events logged before it
        logger.logWithoutWaking(kind.event(message, fields))
        scheduleLogWriterWake()
    }

    /// `log` of an event whose message and fields `content` makes later, on the log writer's
    /// thread (`Logger.Batch.append(_:_:deferred:)`): the loop only keeps a reference,
    /// in `logBatch`, which goes to the logger with the writer's next wake-up (or a quarter
    /// of the logger's capacity at once, when it would wake the writer anyway): takes no lock.
    func logDeferred(_ kind: DaemonEvent, _ content: some DeferredLogContent) {
        guard logger.isEnabled(kind.priority) else { return }
        moveQueuedDenialsToLogBatch()  // after the denials logged before it
        logBatch.append(kind.messageID, kind.priority, deferred: content)
        if logBatch.count >= logger.capacity / 4 { handOffLogBatch() }
        scheduleLogWriterWake()
    }

    /// Logs the denial whose record the history queue has just been given: its line is made
    /// from that record, which the next hand-off to the logger finds there
    /// (`moveQueuedDenialsToLogBatch`), so a denial adds no log entry on the loop; it only
    /// makes sure that the hand-off comes, with the writer's next wake-up, or at once when a
    /// quarter of the logger's capacity may be waiting.
    func logQueuedDenial() {
        if events.lastID - logHandOff.pointee.loggedThroughID >= logger.capacity / 4 { handOffLogBatch() }
        scheduleLogWriterWake()
    }

    /// Puts the logged denials that wait in the history queue (`logQueuedDenial`) into
    /// `logBatch`, oldest first; before anything else joins the batch, and before the history
    /// write takes the queue.
    func moveQueuedDenialsToLogBatch() {
        let newest = events.lastID, loggedThrough = logHandOff.pointee.loggedThroughID
        guard newest > loggedThrough else { return }
        let denials = events.loggedDecisions(after: loggedThrough)
        logHandOff.pointee.loggedThroughID = newest
        guard !denials.isEmpty else { return }
        // One entry for them all: the writer thread makes each line.
        let kind = DaemonEvent.decisionDenied
        logBatch.append(kind.messageID, kind.priority, deferred: DecisionLines(denials))
    }

    /// Queues the deferred events the loop has kept (`logDeferred`, `logQueuedDenial`) with the logger.
    func handOffLogBatch() {
        moveQueuedDenialsToLogBatch()
        guard logBatch.count > 0 else { return }
        logger.logWithoutWaking(logBatch)
    }

    private func scheduleLogWriterWake() {
        guard !logHandOff.pointee.writerWakeScheduled else { return }
        logHandOff.pointee.writerWakeScheduled = true
        _ = loop.schedule(after: Self.logWriterWakeInterval) { [unowned self] in
            logHandOff.pointee.writerWakeScheduled = false
            handOffLogBatch()
            logger.wakeWriter()
        }
    }

    func logStorageFailure(_ what: String, _ error: StoreError) {
        counters.storageFailures += 1
        log(.storageFailure, "State storage failed while \(what): \(error)", [("STATE_DIRECTORY", configuration.stateDirectory)])
    }

    func policyFields() -> [(String, String)] {
        [(DaemonEventField.policyVersion, active.version), (DaemonEventField.policySHA256, active.sha256)]
    }

    func peerFields(_ peer: PeerIdentity) -> [(String, String)] {
        peer.logFields
    }

    func statusLine() -> String {
        "Policy \(active.version): \(active.managedAppIDs.count) managed apps, \(registry.sessionCount) sessions"
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
            log(.notifyFailed, "Telling systemd the daemon's state failed: \(error); carrying on", [])
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
                let failure = Errno.current
                throw StartupError(message: "cannot create \(partial): \(failure)", errno: failure.rawValue)
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
    /// The state lock is held through a descriptor of this very process: a daemon run inside
    /// another process (`Daemon.inProcess`) whose directory was just released.
    var isLockedByThisProcess = false
    var description: String { message }

    /// `EX_CONFIG` (78) for a configuration error, which the unit's
    /// `RestartPreventExitStatus=` exempts from `Restart=on-failure`; 1 otherwise.
    var exitStatus: Int32 { isConfigurationError ? 78 : 1 }
}

