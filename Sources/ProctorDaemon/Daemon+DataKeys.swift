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

    /// Destroys the data keys of `appID` — every user's, or `uid`'s alone — durably
    /// (crypto-shredding) before the caller answers; every kind of wipe calls this —
    /// `proctorctl wipe` and retirement (every user), a compliance violation whose
    /// `onViolation` is `wipe` (the user whose session runs the violating version).
    /// `reason` goes to the log line.
    func shredDataKeys(of appID: AppID, uid: UInt32? = nil, reason: String) throws(StoreError) {
        let destroyed = try store.destroyDataKeys(appID: appID, uid: uid, at: Clock.now())
        guard destroyed > 0 else { return }
        log(.dataKeysDestroyed, "Destroyed \(destroyed) data key(s) of \(appID): \(reason)", [(DaemonEventField.appID, appID)])
        events.emit(kind: EventKind.dataKey, appID: appID, data: ["outcome": "destroyed", "count": .number(destroyed),
                                                          "reason": .string(reason)])
    }

    /// A session's launch verdict says `onViolation: wipe`: the SDK wipes the files, and the key
    /// of the session's user goes here, so a copy of them stays unreadable too.
    func shredDataKeysOnViolation(of session: AgentSession, verdict: Agent.LaunchVerdict) {
        guard !verdict.allowed, verdict.violation == .wipe else { return }
        do throws(StoreError) {
            try shredDataKeys(of: session.appID, uid: session.peer.uid,
                              reason: "compliance violation of version \(session.appVersion ?? "(none)"): onViolation is wipe")
        } catch {
            logStorageFailure("destroying the data keys of \(session.appID) after a compliance violation", error)
        }
    }

    /// After a policy change: the keys of apps the policy now marks `retired` are destroyed.
    /// An app merely missing from the policy keeps its keys (an edit that drops it by mistake
    /// must not be irreversible); it cannot obtain them while it is not authorized.
    func shredDataKeysOfRetiredApps() {
        do throws(StoreError) {
            for appID in try store.appsWithLiveDataKeys() where active.compiled.state(of: appID) == .retired {
                try shredDataKeys(of: appID, reason: "retired by policy \(active.version)")
            }
        } catch {
            logStorageFailure("destroying the data keys of retired apps", error)
        }
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
