import Glibc
import JSONCore
import LinuxIO
import ProctorBundle
import ProctorCrypto
import ProctorFleet
import ProctorPolicy
import ProctorProtocol
import ProctorStore
import Synchronization
import Varlink

/// Signed bundles and pulling them from the MDM (docs/fleet.md): proctord.conf and keys.d,
/// the poll thread, and the one path by which a verified bundle is applied. Loop thread only,
/// except what the fetch thread reads through `FleetShared`.
struct FleetState {
    var configuration = FleetConfiguration()
    var trustedKeys = TrustedKeys([])
    var poller: BundlePoller?
    /// POSTs status documents to `StatusURL=`, and the timer that sends one at least every
    /// `StatusIntervalSec=`.
    var reporter: StatusReporter?
    var statusTimer: TimerHandle?
    /// Builds status documents off the loop (kept for its store connection), and whether one is
    /// being built and another was asked for meanwhile.
    var reportBuilder: StatusDocumentBuilder?
    var buildingReport = false
    var reportWanted = false
    /// Whether the builder could not open the store for the last document (logged once, when it began).
    var reportStoreUnreadable = false
    /// Bumped whenever the poller is replaced, so a late outcome of an old one is ignored.
    var generation = 0
    var lastAppliedSerial: Int?
    /// When `lastAppliedSerial` was applied (from the store, so it survives restarts).
    var lastAppliedAt: UnixMilliseconds?
    var lastFetchAt: UnixMilliseconds?
    /// The last fetch the server answered with a bundle or a 304.
    var lastSuccessfulFetchAt: UnixMilliseconds?
    /// `fetched`, `unchanged`, `applied`, `refused` or `failed`.
    var lastFetchResult: String?
    var nextFetchAt: UnixMilliseconds?
    var lastError: Admin.FleetError?
    /// Since start, for Status and metrics.
    var fetchFailures = 0
    var bundlesRefused = 0
    /// Status documents POSTed to `StatusURL=`: the last POST, the last failure, and counts since start.
    var lastReportAt: UnixMilliseconds?
    var lastReportSucceeded: Bool?
    var lastReportError: Admin.FleetError?
    var reportsSent = 0
    var reportFailures = 0
}

/// What the fetch thread needs from the daemon: the highest serial applied (it verifies a
/// fetched bundle there, off the loop) and a way back to the loop. The daemon is reached
/// only inside `EventLoop.execute`, on the loop's thread.
final class FleetShared: @unchecked Sendable {
    let lastAppliedSerial = Atomic<Int>(0)
    /// Reached through a `DaemonLink` the daemon owns, not a weak reference to the daemon: a
    /// weak reference gives its object a side table for life, which put every retain, release
    /// and `unowned` load of the daemon (several on each `Decide`) on the runtime's slow path.
    weak var link: DaemonLink?
    /// The daemon, nil once it is gone.
    var daemon: Daemon? { link?.daemon }
}

/// The daemon, for `FleetShared`: owned by the daemon alone (`Daemon.fleetLink`), so it lives
/// exactly as long as the daemon.
final class DaemonLink {
    unowned let daemon: Daemon

    init(_ daemon: Daemon) { self.daemon = daemon }
}

/// proctord.conf or keys.d could not be read.
struct FleetSetupError: Error, CustomStringConvertible {
    let description: String
}

extension Daemon {
    /// proctord.conf (absent: pull nothing, accept unsigned policy) and the keys in keys.d.
    static func loadFleetSettings(_ configuration: DaemonConfiguration) throws(FleetSetupError)
        -> (FleetConfiguration, TrustedKeys) {
        let settings: FleetConfiguration
        do {
            settings = try FleetConfiguration.load(configuration.fleetConfigurationPath,
                                                   credentialsDirectory: configuration.credentialsDirectory)
        }
        catch { throw FleetSetupError(description: error.description) }
        do { return (settings, try TrustedKeys.load(directory: configuration.trustedKeysDirectory)) }
        catch { throw FleetSetupError(description: "trusted keys: \(error)") }
    }

    /// Re-reads proctord.conf and keys.d (reload), and polls at once: a reload is the way to
    /// say "the MDM has something new". Invalid files keep the settings in force.
    func reloadFleetSettings() {
        do {
            let (settings, keys) = try Self.loadFleetSettings(configuration)
            let changed = !settings.isIdentical(to: fleet.configuration) || keys.keys != fleet.trustedKeys.keys
            fleet.configuration = settings
            fleet.trustedKeys = keys
            if changed { startFleetThreads() } else { fleet.poller?.pollNow() }
        } catch {
            log(.fleetConfigurationInvalid, "Fleet settings not reloaded, the previous ones stay in force: \(error)",
                [(DaemonEventField.errors, error.description)])
            fleet.lastError = Admin.FleetError(at: Clock.rfc3339(Clock.now()), reason: "configuration", message: error.description)
        }
    }

    /// (Re)starts the poll thread for `BundleURL=` and the status reporter for `StatusURL=`,
    /// or stops them when not configured.
    func startFleetThreads() {
        stopFleetThreads()
        fleet.generation += 1
        fleet.nextFetchAt = nil
        startReporting()
        guard let url = fleet.configuration.source.bundleURL else { return }
        let source = fleet.configuration.source
        let request = source.request(url, maximumBytes: SignedBundle.maximumBytes)
        let keys = fleet.trustedKeys
        let generation = fleet.generation
        let shared = fleetShared
        let loop = self.loop
        let poller = BundlePoller(request: request, intervalSeconds: source.pollIntervalSeconds) { outcome in
            // On the fetch thread: verify here, so a large bundle's signature check and parse
            // do not hold the loop either. The serial is checked again when applying.
            var verdict: Result<OpenedBundle, BundleRefusal>?
            if case .success(.fetched(let body, _)) = outcome.result {
                let verifier = BundleVerifier(trustedKeys: keys, lastAppliedSerial: shared.lastAppliedSerial.load(ordering: .relaxed))
                verdict = Result { () throws(BundleRefusal) in try verifier.open(body, now: Int(time(nil))) }
            }
            let checked = verdict
            loop.execute { shared.daemon?.pulled(outcome, checked, generation: generation) }
        }
        fleet.poller = poller
        poller.start()
    }

    func stopFleetThreads() {
        fleet.poller?.stop()
        fleet.poller = nil
        fleet.reporter?.stop()
        fleet.reporter = nil
        if let timer = fleet.statusTimer { loop.cancel(timer) }
        fleet.statusTimer = nil
    }

    private func startReporting() {
        let source = fleet.configuration.source
        guard let url = source.statusURL else { return }
        let request = source.request(url, maximumBytes: 64 * 1024)
        let shared = fleetShared
        let loop = self.loop
        let generation = fleet.generation
        let shown = FleetConfiguration.redacted(url)
        let reporter = StatusReporter(request: request, retryIntervalSeconds: source.statusIntervalSeconds) { outcome in
            loop.execute { shared.daemon?.statusReported(outcome.result, url: shown, generation: generation) }
        }
        fleet.reporter = reporter
        reporter.start()
        fleet.statusTimer = loop.schedule(every: .seconds(source.statusIntervalSeconds)) { [unowned self] in reportStatus() }
        reportStatus()
    }

    /// Has a fresh status document built and handed to the reporter (after each apply or
    /// refusal, and on the timer): the loop takes only a snapshot of its memory, and
    /// `StatusDocumentBuilder` reads the store and serialises on its own thread. One document is
    /// built at a time; asked for meanwhile, one more is built after it, from the newest state.
    func reportStatus() {
        guard fleet.reporter != nil else { return }
        guard !fleet.buildingReport else { return fleet.reportWanted = true }
        fleet.buildingReport = true
        let builder = fleet.reportBuilder ?? StatusDocumentBuilder(databasePath: store.databasePath)
        fleet.reportBuilder = builder
        let snapshot = statusSnapshot()
        offLoop(on: builder.queue, { builder.build(snapshot) }) { [unowned self] document in
            fleet.buildingReport = false
            noteReportStore(unreadable: document.storeUnreadable)
            fleet.reporter?.submit(document.bytes)
            if fleet.reportWanted {
                fleet.reportWanted = false
                reportStatus()
            }
        }
    }

    /// Says when status documents begin to go without their apps because the builder cannot
    /// open the store (once, with the error: it is tried again for every document), and when
    /// they list them again.
    private func noteReportStore(unreadable error: StoreError?) {
        guard (error != nil) != fleet.reportStoreUnreadable else { return }
        fleet.reportStoreUnreadable = error != nil
        if let error {
            logStorageFailure("opening the state database for status documents, which list no apps until it opens "
                              + "(each one tries again, and says why)", error)
        } else {
            log(.storageRecovered, "Status documents list the apps again: the state database could be opened for them",
                [("STATE_DIRECTORY", configuration.stateDirectory)])
        }
    }

    /// The loop's part of a status document: memory only, a few microseconds per connected app.
    private func statusSnapshot() -> StatusSnapshot {
        var memory: [AppID: AppMemory] = [:]
        for appID in registry.sessionsByApp.keys { memory[appID] = appMemory(of: appID) }
        for queued in events.pending where queued.kind == EventKind.lifecycle {
            if let appID = queued.appID, let event = Self.lifecycleEvent(queued) { memory[appID, default: AppMemory()].queuedLifecycleEvent = event }
        }
        return StatusSnapshot(machineID: machineID, sentAt: Clock.rfc3339(Clock.now()), status: status(appsKnown: 0),
                              active: active, memory: memory, maxApps: fleet.configuration.source.statusMaxApps)
    }

    /// A status POST's result, back on the loop: for Status, and the journal when it failed
    /// (`url` as shown, `FleetConfiguration.redacted`).
    private func statusReported(_ result: Result<Void, FetchFailure>, url: String, generation: Int) {
        guard generation == fleet.generation else { return }
        let now = Clock.now()
        fleet.lastReportAt = now
        guard case .failure(let failure) = result else {
            fleet.lastReportSucceeded = true
            fleet.reportsSent += 1
            return
        }
        fleet.lastReportSucceeded = false
        fleet.reportFailures += 1
        fleet.lastReportError = Admin.FleetError(at: Clock.rfc3339(now), reason: failure.name, message: failure.description)
        log(.statusReportFailed, "Sending the status document to \(url) failed, retrying later: \(failure)",
            [(DaemonEventField.bundleSource, url), (DaemonEventField.reason, failure.name)])
    }

    /// A poll's outcome, back on the loop.
    func pulled(_ outcome: BundlePoller.Outcome, _ verdict: Result<OpenedBundle, BundleRefusal>?, generation: Int) {
        guard generation == fleet.generation, let url = fleet.configuration.source.bundleURL.map(FleetConfiguration.redacted)
        else { return }
        let now = Clock.now()  // milliseconds: two polls within a second stay apart in Status
        fleet.nextFetchAt = now + UnixMilliseconds(outcome.nextPollAt - outcome.finishedAt) * 1000
        // A fetch shows in Status together with its result: a fetched bundle's once it is applied.
        let fetched = { [unowned self] (result: String) in
            fleet.lastFetchAt = now
            if case .success = outcome.result { fleet.lastSuccessfulFetchAt = now }
            fleet.lastFetchResult = result
        }
        switch (outcome.result, verdict) {
        case (.failure(let failure), _):
            fetched("failed")
            fleet.fetchFailures += 1
            fleet.lastError = Admin.FleetError(at: Clock.rfc3339(Clock.now()), reason: failure.name, message: failure.description)
            log(.bundleFetchFailed, "Fetching the policy bundle from \(url) failed (\(outcome.consecutiveFailures) in a row), "
                + "retrying at \(Clock.rfc3339(fleet.nextFetchAt!)): \(failure)",
                [(DaemonEventField.bundleSource, url), (DaemonEventField.reason, failure.name)])
        case (.success(.notModified), _):
            fetched("unchanged")
        case (.success(.fetched), .failure(.rollback(let serial, let lastApplied))) where serial == lastApplied:
            // The bundle in force, fetched again (after a restart, or a server without ETags).
            fetched("unchanged")
        case (.success(.fetched), .failure(let refusal)):
            fetched("refused")
            _ = refuse(refusal, source: url)
        case (.success(.fetched), .success(let opened)):
            // In turn with reloads and other applies (the policy update queue).
            submit(.change { [unowned self] finished in
                let directory = self.directory
                offLoop({ Self.compile(opened, over: directory) }) { [unowned self] compiled in
                    defer { finished() }
                    do throws(VarlinkError) {
                        _ = try applySigned(opened, compiled: compiled, source: url, uid: getuid())
                        fetched("applied")
                    } catch {
                        fetched(error.name.hasSuffix(".BundleRefused") ? "refused" : "failed")
                        // Perhaps passing (a full disk): fetch the same bundle again next time.
                        fleet.poller?.forgetETag()
                    }
                    reportStatus()
                }
            })
            return
        case (.success(.fetched), nil):
            preconditionFailure("a fetched bundle is always verified")
        }
        if case .success(.fetched) = outcome.result { reportStatus() }
    }

    /// `ApplyBundle`: a signed bundle from an administrator, verified exactly as a pulled one,
    /// applied in turn with reloads and other applies.
    func applyBundle(_ request: Admin.ApplyBundle.Request, _ context: ConnectionContext,
                     reply: @escaping (Result<Admin.ApplyBundle.Reply, VarlinkError>) -> Void) {
        submit(.change { [unowned self] finished in
            let source = "admin uid \(context.peer.uid)"
            let verifier = BundleVerifier(trustedKeys: fleet.trustedKeys, lastAppliedSerial: fleet.lastAppliedSerial ?? 0)
            let (bytes, now, directory) = (Array(request.bundle.utf8), Int(Clock.now() / 1000), self.directory)
            offLoop({ () -> Result<(OpenedBundle, (CanonicalPolicy, ActivePolicy)), BundleRefusal> in
                Result { () throws(BundleRefusal) in
                    let opened = try verifier.open(bytes, now: now)
                    return (opened, Self.compile(opened, over: directory))
                }
            }) { [unowned self] verdict in
                defer {
                    reportStatus()  // applied or refused: the MDM hears of it either way
                    finished()
                }
                reply(Result { () throws(VarlinkError) in
                    switch verdict {
                    case .success(let (opened, compiled)):
                        return try applySigned(opened, compiled: compiled, source: source, uid: context.peer.uid)
                    case .failure(let refusal):
                        throw refuse(refusal, source: source)
                    }
                })
            }
        })
    }

    /// `RequireSignedBundles=yes` refuses plain policy from the Admin interface (ApplyPolicy,
    /// RollbackPolicy): only the MDM's key may change policy.
    func refuseUnsignedIfRequired(_ context: ConnectionContext, rollback: Bool = false) throws(VarlinkError) {
        guard fleet.configuration.requireSignedBundles else { return }
        let source = "admin uid \(context.peer.uid)"
        defer { reportStatus() }
        guard rollback else { throw refuse(.unsigned, source: source) }
        let message = "RequireSignedBundles=yes: a rollback is refused; only a newer signed bundle may change the policy"
        logRefusal(reason: "unsigned", message: message, source: source, fields: [])
        throw AdminError.bundleRefused(reason: "unsigned", message: message)
    }

    /// The policy `opened` carries laid over `directory` (policy.d as the change before left
    /// it) and compiled: run off the loop, as a reload's compilation is.
    private static func compile(_ opened: OpenedBundle, over directory: KeptDirectory?) -> (CanonicalPolicy, ActivePolicy) {
        let policy = CanonicalPolicy(opened.policy)
        return (policy, ActivePolicy(directory: directory.map(ActivePolicy.Directory.kept), bundle: policy,
                                     bundleVersion: opened.policy.version, loadedAt: Clock.now()))
    }

    /// Persist (serial checked and recorded in the same transaction), then swap in `candidate`
    /// (`opened`'s policy compiled), then push to subscribers: `ApplyPolicy`'s order, so an
    /// acknowledged apply survives any crash.
    private func applySigned(_ opened: OpenedBundle, compiled: (policy: CanonicalPolicy, candidate: ActivePolicy), source: String,
                             uid: UInt32) throws(VarlinkError) -> Admin.ApplyBundle.Reply {
        let (verified, policy) = (opened.bundle, compiled.policy)
        if let problem = Policy.bundleSizeProblem(canonicalSize: policy.text.utf8.count, source: nil) {
            throw refuse(.invalidPolicy([problem.description]), source: source)
        }
        let record: BundleRecord
        do {
            record = try store.apply(version: opened.policy.version, canonicalJSON: policy.text, sha256: policy.sha256,
                                     expectedVersion: nil, at: Clock.now(), byUID: uid,
                                     signed: (serial: Int64(verified.serial), keyID: verified.keyID))
        } catch .serialNotNewer(let serial, let lastApplied) {
            throw refuse(.rollback(serial: Int(serial), lastApplied: Int(lastApplied)), source: source)
        } catch {
            throw adminError(for: error, while: "applying signed bundle serial \(verified.serial)")
        }
        fleet.lastAppliedSerial = verified.serial
        fleet.lastAppliedAt = record.appliedAt
        fleetShared.lastAppliedSerial.store(verified.serial, ordering: .relaxed)
        putInForce(compiled.candidate, bundle: (policy, record))
        log(.bundleApplied, "Applied signed bundle serial \(verified.serial) from \(source), signed by key \(verified.keyID): "
            + "policy \(opened.policy.version) in force",
            policyFields() + [(DaemonEventField.bundleSerial, String(verified.serial)),
                              (DaemonEventField.bundleKeyID, verified.keyID), (DaemonEventField.bundleSource, source)])
        return Admin.ApplyBundle.Reply(version: active.version, sha256: active.sha256, serial: verified.serial)
    }

    /// Logs a refusal, shows it in Status, and returns the Admin error for it.
    private func refuse(_ refusal: BundleRefusal, source: String) -> VarlinkError {
        logRefusal(reason: refusal.name, message: refusal.description, source: source, fields: [])
        return AdminError.bundleRefused(reason: refusal.name, message: refusal.description)
    }

    private func logRefusal(reason: String, message: String, source: String, fields: [(String, String)]) {
        fleet.lastError = Admin.FleetError(at: Clock.rfc3339(Clock.now()), reason: reason, message: message)
        fleet.bundlesRefused += 1
        log(.bundleRefused, "Refused a policy bundle from \(source), policy \(active.version) stays in force: \(message)",
            policyFields() + [(DaemonEventField.reason, reason), (DaemonEventField.bundleSource, source)] + fields)
    }

    /// `FleetStatus` of the Admin interface.
    var fleetStatus: Admin.FleetStatus {
        Admin.FleetStatus(bundleUrl: fleet.configuration.source.bundleURL.map(FleetConfiguration.redacted),
                          requireSignedBundles: fleet.configuration.requireSignedBundles,
                          trustedKeys: fleet.trustedKeys.keys.keys.sorted(), lastAppliedSerial: fleet.lastAppliedSerial,
                          lastAppliedAt: fleet.lastAppliedAt.map(Clock.rfc3339), lastFetchAt: fleet.lastFetchAt.map(Clock.rfc3339),
                          lastSuccessfulFetchAt: fleet.lastSuccessfulFetchAt.map(Clock.rfc3339), lastFetchResult: fleet.lastFetchResult,
                          nextFetchAt: fleet.nextFetchAt.map(Clock.rfc3339), lastError: fleet.lastError,
                          fetchFailures: fleet.fetchFailures, bundlesRefused: fleet.bundlesRefused,
                          statusReports: fleet.configuration.source.statusURL.map { url in
                              Admin.StatusDelivery(statusUrl: FleetConfiguration.redacted(url), lastReportAt: fleet.lastReportAt.map(Clock.rfc3339),
                                                   lastReportResult: fleet.lastReportSucceeded.map { $0 ? "sent" : "failed" },
                                                   lastReportError: fleet.lastReportError, reportsSent: fleet.reportsSent,
                                                   reportFailures: fleet.reportFailures)
                          })
    }
}

extension Daemon {
    /// The machine's id from `/etc/machine-id` (32 hex digits), or "" if it cannot be read.
    static func readMachineID() -> String {
        guard let file = fopen("/etc/machine-id", "r") else { return "" }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 64)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return "" }
        let line = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        let text = String(decoding: line, as: UTF8.self).filter { $0.isHexDigit }
        return text.count == 32 ? text : ""
    }
}
