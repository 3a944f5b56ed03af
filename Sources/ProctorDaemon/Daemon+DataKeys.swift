import LinuxIO
import ProctorCrypto
import ProctorPolicy
import ProctorProtocol
import ProctorStore
import Varlink

/// Releasing and destroying the apps' data keys (`DataKeyVault`).
extension Daemon {
    /// `Agent.GetDataKey`: the key of the session's app for the session's user, only while the
    /// app is authorized and compliant (its `launch` decision is allowed). The session proves
    /// the identity rule: it exists only on the connection whose caller matched the app's
    /// `match` block, only the process that registered may use it (the call's sender), and the
    /// user is the one the kernel reported for that connection.
    func releaseDataKey(to session: AgentSession) throws(VarlinkError) -> Agent.GetDataKey.Reply {
        let appID = session.appID
        let uid = session.peer.uid
        let fields = [(DaemonEventField.appID, appID), (DaemonEventField.session, session.id)] + peerFields(session.peer)
        let launch = active.compiled.decide(DecisionRequest(app: appID, action: .launch, appVersion: session.semanticVersion))
        let state = active.compiled.state(of: appID) ?? .retired
        guard state == .authorized, launch.allowed else {
            let reason = state == .authorized ? launch.reason : "the app is \(state.rawValue)"
            log(.dataKeyRefused, "Data key refused to \(appID) for uid \(uid): \(reason)", fields)
            throw AgentError.appBlocked(appID, state: state, reason: reason)
        }
        if awaitsViolationShred(appID, uid: uid) {
            let reason = "a compliance violation's wipe of this key failed and is being retried; ask again when it is done"
            log(.dataKeyRefused, "Data key of \(appID) for uid \(uid) is unavailable: \(reason)", fields)
            throw AgentError.dataKeyUnavailable(appID, reason: reason)
        }
        do throws(DataKeyVault.Failure) {
            let (key, record) = try dataKeys.release(appID: appID, uid: uid, at: Clock.now())
            events.emit(kind: EventKind.dataKey, appID: appID, data: ["outcome": "released", "uid": .number(Int(uid)),
                                                              "generation": .number(Int(record.generation))])
            return Agent.GetDataKey.Reply(key: key.base64ForTransfer, keyId: record.keyID, generation: Int(record.generation))
        } catch {
            switch error {
            case .store(let storeError):
                logStorageFailure("releasing the data key of \(appID)", storeError)
                throw AgentError.storageFailure("\(storeError)")
            case .unwrap(let reason):
                log(.dataKeyRefused, "Data key of \(appID) for uid \(uid) is unusable: \(reason)", fields)
                throw AgentError.dataKeyUnavailable(appID, reason: reason)
            case .crypto(let cryptoError):
                throw AgentError.dataKeyUnavailable(appID, reason: "\(cryptoError)")
            }
        }
    }

    /// Whether a violation's shred that could not destroy `uid`'s key of `appID` is still to be
    /// retried: the key is condemned, and one released now (to a version compliant again) would
    /// be destroyed under the app by the retry. A retirement's needs no such check: the retry
    /// drops it once the app is no longer retired, and a retired app obtains no key.
    private func awaitsViolationShred(_ appID: AppID, uid: UInt32) -> Bool {
        unfinishedShreds.contains { shred in
            guard case .violation = shred.cause else { return false }
            return !shred.keysDestroyed && shred.appID == appID && shred.uid == uid
        }
    }

    /// Destroys the data keys of `appID` — every user's, or `uid`'s alone — durably
    /// (crypto-shredding) before the caller answers; every kind of wipe calls this —
    /// `proctorctl wipe` and retirement (every user), a compliance violation whose
    /// `onViolation` is `wipe` (the user whose session runs the violating version).
    /// `reason` goes to the log line. Only an administrator's wipe, who hears whether it
    /// completed, is `waitingForReaders` (`StateStore.destroyDataKeys`); the loop waits then.
    func shredDataKeys(of appID: AppID, uid: UInt32? = nil, throughGeneration: Int64? = nil, reason: String,
                       waitingForReaders: Bool) throws(StoreError) {
        let destroyed = try store.destroyDataKeys(appID: appID, uid: uid, throughGeneration: throughGeneration, at: Clock.now(),
                                                  waitingForReaders: waitingForReaders)
        guard destroyed > 0 else { return }
        log(.dataKeysDestroyed, "Destroyed \(destroyed) data key(s) of \(appID): \(reason)", [(DaemonEventField.appID, appID)])
        events.emit(kind: EventKind.dataKey, appID: appID, data: ["outcome": "destroyed", "count": .number(destroyed),
                                                          "reason": .string(reason)])
    }

    /// A session's launch verdict says `onViolation: wipe`: the SDK wipes the files, and the key
    /// of the session's user goes here, so a copy of them stays unreadable too.
    func shredDataKeysOnViolation(of session: AgentSession, verdict: Agent.LaunchVerdict) {
        guard !verdict.allowed, verdict.violation == .wipe else { return }
        shredRetryingOnFailure(session.appID, uid: session.peer.uid, because: .violation(appVersion: session.appVersion))
    }

    /// After a policy change: the keys of apps the policy now marks `retired` are destroyed.
    /// An app merely missing from the policy keeps its keys (an edit that drops it by mistake
    /// must not be irreversible); it cannot obtain them while it is not authorized.
    func shredDataKeysOfRetiredApps() {
        let appsWithKeys: Set<String>
        do throws(StoreError) { appsWithKeys = try store.appsWithLiveDataKeys() } catch {
            return logStorageFailure("listing the apps that hold data keys, to destroy those of retired apps", error)
        }
        for appID in appsWithKeys.sorted() where active.compiled.state(of: appID) == .retired {
            shredRetryingOnFailure(appID, uid: nil, because: .retirement(policyVersion: active.version))
        }
    }

    /// Shreds now or, when that fails, logs it and tries again on the loop's timer: nobody
    /// waits for a retirement's or a violation's shred to retry it, as an administrator
    /// retries a `Wipe` that failed. (The erasure would otherwise finish only at the app's
    /// next shred or when the store closes.) No attempt waits for a reader to step aside:
    /// the loop would answer nothing meanwhile, up to the busy timeout each time.
    private func shredRetryingOnFailure(_ appID: AppID, uid: UInt32?, because cause: UnfinishedShred.Cause) {
        do throws(StoreError) {
            try shredDataKeys(of: appID, uid: uid, reason: cause.description, waitingForReaders: false)
        } catch {
            logStorageFailure("destroying the data keys of \(appID) (\(cause)); tried again in the background", error)
            // After `shredIncomplete` the keys are destroyed: a retry only finishes erasing them,
            // and so cannot destroy a key the app obtained since (once authorized or compliant again).
            let keysDestroyed = error == .shredIncomplete(path: store.databasePath)
            let shred = UnfinishedShred(appID: appID, uid: uid, cause: cause, keysDestroyed: keysDestroyed,
                                        throughGeneration: keysDestroyed ? nil : newestGeneration(of: appID, uid: uid))
            unfinishedShreds.removeAll { $0.appID == appID && $0.uid == uid }
            unfinishedShreds.append(shred)
            recordPendingViolationShreds()
            scheduleShredRetry()
        }
    }

    /// At start, before anything is served: what the last run of proctord left unfinished.
    /// The violations' shreds it recorded as pending (`PendingViolationShreds`) are done, and
    /// when it did not stop cleanly the write-ahead log it left is checkpointed and emptied if
    /// any key was ever destroyed: SQLite reads such a log but leaves it as it is, with the
    /// old bytes of keys destroyed since its last checkpoint (a shred a reader held back, the
    /// run killed before the retry). Both go the way of the retries, a first one now: what
    /// fails goes on on the timer. (A retirement's shred needs nothing: every start destroys
    /// the keys of the apps the policy retires.)
    func finishShredsOfTheLastRun() {
        do throws(PendingViolationShreds.Unreadable) {
            recordedViolationShreds = try PendingViolationShreds.read(from: configuration.stateDirectory)
            unfinishedShreds += recordedViolationShreds.map(UnfinishedShred.init)
        } catch {
            log(.storageFailure, "The compliance violations' shreds left unfinished, recorded in "
                + "\(PendingViolationShreds.path(in: configuration.stateDirectory)), cannot be redone: \(error); "
                + "their keys stay alive until the apps' next shred (proctorctl wipe APP destroys them)",
                [("STATE_DIRECTORY", configuration.stateDirectory)])
        }
        do throws(StoreError) {
            if store.foundUnclosedLog, try store.hasDestroyedDataKey() {
                unfinishedShreds.append(UnfinishedShred(appID: nil, uid: nil, cause: .uncleanStop, keysDestroyed: true))
            }
        } catch {
            logStorageFailure("looking for destroyed data keys, whose old bytes the log of a run that did not stop cleanly "
                              + "may still hold", error)
        }
        guard !unfinishedShreds.isEmpty else { return }
        log(.dataKeysDestroyed, "Finishing \(unfinishedShreds.count) shred(s) the last run left unfinished: "
            + unfinishedShreds.map { "\($0.subject) (\($0.cause))" }.joined(separator: "; "), [])
        retryUnfinishedShreds()
    }

    /// The newest key generation `uid` has of `appID`: what a shred that failed condemns, so that
    /// no retry destroys a later one; nil (every live key) for every user's keys or when the store
    /// cannot say. This run makes no later key while a violation's shred waits
    /// (`awaitsViolationShred`), but the next start redoes what `pending-shreds` lists, and that
    /// record can outlive the shred's success when removing it fails.
    private func newestGeneration(of appID: AppID, uid: UInt32?) -> Int64? {
        guard let uid else { return nil }
        return try? store.nextDataKeyGeneration(appID: appID, uid: uid) - 1
    }

    /// Keeps `PendingViolationShreds` to the violations' shreds still to destroy keys, so that
    /// a restart does them. A failure is logged: only a restart before the retries end loses them.
    private func recordPendingViolationShreds() {
        let pending = unfinishedShreds.compactMap(\.pendingViolation)
        guard pending != recordedViolationShreds else { return }
        do throws(FileReplacementError) {
            try PendingViolationShreds.write(pending, to: configuration.stateDirectory)
            recordedViolationShreds = pending
        } catch {
            log(.storageFailure, "The compliance violations' shreds still to do cannot be recorded: \(error); a restart "
                + "before their retries complete does not redo them", [("STATE_DIRECTORY", configuration.stateDirectory)])
        }
    }

    /// The first retry of unfinished shreds comes `DaemonConfiguration.shredRetryInterval`
    /// later (1 s), each next one twice as late up to `shredRetryMaxInterval`: a store that
    /// keeps failing is not hammered.
    static let shredRetryMaxInterval: Duration = .seconds(60)
    /// Retries of one shred before it is left to the app's next shred or the store's close (≈ 3 min).
    static let shredRetryLimit = 8

    private func scheduleShredRetry() {
        guard !shredRetryScheduled, let first = unfinishedShreds.map(\.retries).min() else { return }
        shredRetryScheduled = true
        let delay = min(configuration.shredRetryInterval * (1 << min(first, 16)), Self.shredRetryMaxInterval)
        _ = loop.schedule(after: delay) { [unowned self] in
            shredRetryScheduled = false
            retryUnfinishedShreds()
        }
    }

    /// Tries each unfinished shred once more; says when one finally completes, and gives up on
    /// one after `shredRetryLimit` retries. Keys not yet destroyed (the shred's own write
    /// failed) are destroyed only while the app is still retired.
    private func retryUnfinishedShreds() {
        unfinishedShreds = unfinishedShreds.compactMap { shred in
            var shred = shred
            shred.retries += 1
            do throws(StoreError) {
                if shred.keysDestroyed {
                    try store.eraseDestroyedDataKeys(waitingForReaders: false)
                } else if let appID = shred.appID {
                    if case .retirement = shred.cause, active.compiled.state(of: appID) != .retired { return nil }
                    try shredDataKeys(of: appID, uid: shred.uid, throughGeneration: shred.throughGeneration,
                                      reason: shred.cause.description, waitingForReaders: false)
                }
                log(.dataKeysDestroyed, "Finished erasing \(shred.subject) (\(shred.cause)) at retry \(shred.retries)",
                    shred.appID.map { [(DaemonEventField.appID, $0)] } ?? [])
                return nil
            } catch {
                guard shred.retries >= Self.shredRetryLimit else { return shred }
                // Keys the shred could not destroy are left alive (releasable again): closing the store erases nothing of them.
                let outcome = shred.keysDestroyed ? "the erasure finishes at the next shred or when proctord stops"
                    : "the keys were not destroyed; the app's next shred (a wipe, a violation, a retirement) destroys them"
                logStorageFailure((shred.keysDestroyed ? "erasing " : "destroying ") + "\(shred.subject) (\(shred.cause)); "
                                  + "given up after \(shred.retries) retries: " + outcome, error)
                return nil
            }
        }
        recordPendingViolationShreds()
        scheduleShredRetry()
    }

    /// `Admin.DataKeyState` of every key generation in `records` (one app's); nil when it never had one.
    static func dataKeyStates(_ records: [DataKeyRecord]) -> [Admin.DataKeyState]? {
        guard !records.isEmpty else { return nil }
        return records.map { record in
            Admin.DataKeyState(uid: Int(record.uid), generation: Int(record.generation), keyId: record.keyID,
                               createdAt: Clock.rfc3339(record.createdAt), lastReleasedAt: record.lastReleasedAt.map(Clock.rfc3339),
                               destroyedAt: record.destroyedAt.map(Clock.rfc3339))
        }
    }

    /// Says where the machine key came from (never the key).
    func logMachineKeySource(_ source: MachineKeySource) {
        let description = switch source {
        case .credential(let path): "the systemd credential \(path)"
        case .stateFile(let path, let created): (created ? "a new key file " : "the key file ") + path
        }
        log(.machineKeyLoaded, "Machine key loaded from \(description)", [("MACHINE_KEY_SOURCE", description)])
    }
}

/// A retirement's or a compliance violation's shred that failed (the store failed, or a
/// reader kept its checkpoint from emptying the write-ahead log), or the erasure a run that did
/// not stop cleanly left, tried again later.
struct UnfinishedShred {
    /// Why the keys go.
    enum Cause: CustomStringConvertible {
        case retirement(policyVersion: String)
        case violation(appVersion: String?)
        /// The keys were destroyed before the last run stopped without checkpointing its
        /// write-ahead log (it was killed or crashed); their old bytes may still be in it.
        case uncleanStop

        var description: String {
            switch self {
            case .retirement(let policyVersion): "retired by policy \(policyVersion)"
            case .violation(let appVersion): "compliance violation of version \(appVersion ?? "(none)"): onViolation is wipe"
            case .uncleanStop: "their old bytes may be in the write-ahead log the last run left"
            }
        }
    }

    /// Whose keys go; nil for the destroyed keys of every app (`uncleanStop`).
    let appID: AppID?
    /// The user whose key goes; nil for every user's.
    let uid: UInt32?
    let cause: Cause
    /// Whether the keys are destroyed and only their bytes are left to erase (`shredIncomplete`).
    let keysDestroyed: Bool
    /// The newest generation the shred destroys, if bounded (`PendingViolationShred.throughGeneration`).
    var throughGeneration: Int64?
    var retries = 0

    /// What the log calls the keys.
    var subject: String { appID.map { "the data keys of \($0)" } ?? "the destroyed data keys of every app" }

    /// What `PendingViolationShreds` keeps of it: a violation's keys not yet destroyed.
    var pendingViolation: PendingViolationShred? {
        guard case .violation(let appVersion) = cause, !keysDestroyed, let appID, let uid else { return nil }
        return PendingViolationShred(appID: appID, uid: uid, appVersion: appVersion, throughGeneration: throughGeneration)
    }
}

extension UnfinishedShred {
    /// A violation's shred the last run recorded as pending.
    init(_ pending: PendingViolationShred) {
        self.init(appID: pending.appID, uid: pending.uid, cause: .violation(appVersion: pending.appVersion), keysDestroyed: false,
                  throughGeneration: pending.throughGeneration)
    }
}
