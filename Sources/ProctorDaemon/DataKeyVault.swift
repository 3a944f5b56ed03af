import Glibc
import ProctorCrypto
import ProctorPolicy
import ProctorStore

/// The app data keys proctord holds (issue 13 §2–3): one 256-bit key per app and user,
/// created at the first request, kept in the state store wrapped by the machine key and bound
/// to its app, user and generation; destroyed (crypto-shredding) by a wipe or retirement.
/// Keys leave this type only as the return value of `release`; none is ever logged.
struct DataKeyVault {
    enum Failure: Error {
        case store(StoreError)
        /// A stored key does not unwrap with this machine key (the machine key was replaced or
        /// the row damaged); `reason` never carries key material.
        case unwrap(reason: String)
        case crypto(CryptoError)
    }

    let machineKey: SymmetricKey
    let store: StateStore
    /// How stale `lastReleasedAt` may get (milliseconds) before a release updates it.
    static let releaseRecordingInterval: Int64 = 60_000

    /// The live key of `appID` for `uid`, created (and stored, durably) if it has none; its
    /// release time is recorded (to the minute).
    func release(appID: AppID, uid: UInt32, at now: Int64) throws(Failure) -> (key: SymmetricKey, record: DataKeyRecord) {
        if let record = try storing({ () throws(StoreError) in try store.liveDataKey(appID: appID, uid: uid) }) {
            let key: SymmetricKey
            do {
                key = try KeyWrapping.unwrap(record.wrapped ?? [], with: machineKey,
                                             context: Self.context(appID: appID, uid: uid, generation: record.generation))
            } catch {
                throw .unwrap(reason: "key generation \(record.generation) does not unwrap with this machine key: \(error)")
            }
            // Recorded at most once a minute: an app asking in a loop must not cost an fsync a call.
            if now - (record.lastReleasedAt ?? 0) >= Self.releaseRecordingInterval {
                try storing { () throws(StoreError) in try store.markDataKeyReleased(appID: appID, uid: uid, at: now) }
            }
            return (key, record)
        }
        let generation = try storing { () throws(StoreError) in try store.nextDataKeyGeneration(appID: appID, uid: uid) }
        let key: SymmetricKey
        let wrapped: [UInt8]
        do {
            key = try SymmetricKey.random()
            wrapped = try KeyWrapping.wrap(key, with: machineKey, context: Self.context(appID: appID, uid: uid, generation: generation))
        } catch {
            throw .crypto(error)
        }
        // Flushed, on the loop, before the key is handed out: a key an app encrypted with must
        // never be lost to a power cut. No client makes this write at will: an app gets one key
        // per user, and a new one only after its key was destroyed (an administrator's wipe, a
        // retirement, or a violation with `onViolation: wipe`, whose shred is itself flushed).
        let record = try storing { () throws(StoreError) in
            try store.insertDataKey(appID: appID, uid: uid, generation: generation, keyID: key.keyID, wrapped: wrapped, at: now)
        }
        return (key, record)
    }

    private func storing<T>(_ body: () throws(StoreError) -> T) throws(Failure) -> T {
        do { return try body() } catch { throw .store(error) }
    }

    /// The associated data binding a wrapped key to its record: moved to another app, user or
    /// generation, it no longer unwraps.
    static func context(appID: AppID, uid: UInt32, generation: Int64) -> String {
        "proctor.data-key app=\(appID) uid=\(uid) generation=\(generation)"
    }
}

/// Where the machine key came from, for the start-up log line.
enum MachineKeySource: Equatable {
    /// systemd decrypted it from an encrypted credential into `$CREDENTIALS_DIRECTORY`.
    case credential(path: String)
    /// The 0600 file in the state directory (created now if `created`).
    case stateFile(path: String, created: Bool)
}

extension DataKeyVault {
    /// The credential's name (`LoadCredentialEncrypted=machine-key:…`) and the state file's.
    static let machineKeyName = "machine-key"

    /// The machine key: systemd's decrypted credential when the unit loads one, else the 0600
    /// file `machine-key` in the state directory, created (random, `O_EXCL`, fsynced) the
    /// first time. A credential that exists but cannot be read stops start-up: falling back to
    /// another key would leave every stored data key unusable.
    static func loadMachineKey(_ configuration: DaemonConfiguration) throws(StartupError) -> (SymmetricKey, MachineKeySource) {
        if let directory = configuration.credentialsDirectory {
            let path = directory + "/" + machineKeyName
            if access(path, F_OK) == 0 {
                do { return (try SymmetricKey.read(rawKeyFile: path), .credential(path: path)) }
                catch { throw StartupError(message: "cannot read the machine key credential: \(error)", errno: EIO) }
            }
        }
        let path = configuration.stateDirectory + "/" + machineKeyName
        do {
            if access(path, F_OK) == 0 { return (try SymmetricKey.read(rawKeyFile: path), .stateFile(path: path, created: false)) }
            return (try SymmetricKey.createRawKeyFile(path), .stateFile(path: path, created: true))
        } catch {
            throw StartupError(message: "cannot load or create the machine key: \(error)", errno: EIO)
        }
    }
}
