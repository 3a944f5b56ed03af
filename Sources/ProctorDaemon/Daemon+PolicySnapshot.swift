import Dispatch
import LinuxIO
import ProctorPolicy
import ProctorStore

/// The policy snapshot (`PolicySnapshot`): read at start-up, written after every change of
/// the policy in force.
extension Daemon {
    /// The key of a policy made of `policy.d` (when `hasDirectory`), whose files' identity is
    /// `identity`, and the applied `bundle` (`PolicySnapshot.Key.current`).
    static func snapshotKey(hasDirectory: Bool, identity: PolicyDirectoryIdentity?, bundle: BundleRecord?)
        -> PolicySnapshot.Key?
    {
        PolicySnapshot.Key.current(directory: hasDirectory ? identity : nil, bundle: bundle.map { ($0.id, $0.sha256) })
    }

    /// The snapshot in `stateDirectory` when its key is `key`; nil when there is none, it
    /// was made of something else, or it cannot be used (`unusable` says why, to be logged).
    static func readSnapshot(matching key: PolicySnapshot.Key?, in stateDirectory: String)
        -> (snapshot: PolicySnapshot?, unusable: String?)
    {
        guard let key else { return (nil, nil) }
        do {
            guard let snapshot = try PolicySnapshot.read(from: stateDirectory), snapshot.key == key else { return (nil, nil) }
            return (snapshot, nil)
        } catch {
            return (nil, error.description)
        }
    }

    func logUnusableSnapshot(_ reason: String) {
        log(.policySnapshotIgnored, "The policy snapshot \(PolicySnapshot.path(in: configuration.stateDirectory)) is not used: "
            + "\(reason); the policy was worked out from its JSON instead", [("STATE_DIRECTORY", configuration.stateDirectory)])
    }

    /// Records what the policy in force is made of, unless the snapshot already says so. The
    /// file is written (and fsynced) on a serial worker, so the loop never waits for the disk
    /// and the last change's snapshot is the last written.
    func saveSnapshot() {
        guard let key = Self.snapshotKey(hasDirectory: directory != nil, identity: directoryIdentity, bundle: bundle?.record) else { return }
        let snapshot = PolicySnapshot(key: key, sha256: active.sha256)
        guard snapshot != savedSnapshot else { return }
        savedSnapshot = snapshot
        let stateDirectory = configuration.stateDirectory
        offLoop(on: Self.snapshotWriter, { () -> FileReplacementError? in
            do throws(FileReplacementError) { try snapshot.write(to: stateDirectory) } catch { return error }
            return nil
        }) { [unowned self] error in
            if let error { snapshotNotWritten(snapshot, error) }
        }
    }

    private func snapshotNotWritten(_ snapshot: PolicySnapshot, _ error: FileReplacementError) {
        if savedSnapshot == snapshot { savedSnapshot = nil }
        log(.policySnapshotIgnored, "The policy snapshot cannot be written (\(error)): the next start works the policy out "
            + "from its JSON", [("STATE_DIRECTORY", configuration.stateDirectory)])
    }

    /// Writes snapshots one after the other, in the order the policies came into force.
    private static let snapshotWriter = DispatchQueue(label: "proctord.policy-snapshot")
}
