import LinuxIO
import ProctorPolicy
import ProctorStore

/// The policy snapshot (`PolicySnapshot`): read at start-up, written after every change of
/// the policy in force (encoded and written off the loop).
extension Daemon {
    /// The key of a policy made of `policy.d` (when `hasDirectory`), whose files' identity is
    /// `identity`, and the applied `bundle` (`PolicySnapshot.Key.current`).
    static func snapshotKey(hasDirectory: Bool, identity: PolicyDirectoryIdentity?, bundle: BundleRecord?)
        -> PolicySnapshot.Key?
    {
        PolicySnapshot.Key.current(directory: hasDirectory ? identity : nil, bundle: bundle.map { ($0.id, $0.sha256) })
    }

    /// The policy in force restored from the snapshot in `stateDirectory`, when it was made of
    /// `policyDirectory`'s files as they are (listed and their statuses taken; no file read)
    /// and `bundle`, by this build: no policy file is read, parsed or compiled. Nil when there
    /// is none or it was made of something else; `unusable` says why a snapshot that should
    /// have been used could not be, to be logged.
    static func restoreFromSnapshot(policyDirectory: String, bundle: (policy: CanonicalPolicy, record: BundleRecord)?,
                                    stateDirectory: String, at loadedAt: Int64)
        -> (restored: (active: ActivePolicy, identity: PolicyDirectoryIdentity, snapshot: PolicySnapshot)?, unusable: String?)
    {
        guard let listed = PolicyDirectory.identify(policyDirectory), listed.identity.isSettled,
              let key = snapshotKey(hasDirectory: true, identity: listed.identity, bundle: bundle?.record) else { return (nil, nil) }
        let read: (snapshot: PolicySnapshot, contents: PolicySnapshot.Contents)?
        do {
            read = try PolicySnapshot.read(from: stateDirectory, matching: key)
        } catch {
            return (nil, error.description)
        }
        guard let read else { return (nil, nil) }
        let active = ActivePolicy(restoring: read.contents, sha256: read.snapshot.sha256, sources: listed.names,
                                  bundleVersion: bundle?.record.version, loadedAt: loadedAt)
        return ((active, listed.identity, read.snapshot), nil)
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
        // Under a bundle, policy.d compiled alone too (a bundle applied later lays over it).
        let contents = PolicySnapshot.Contents(compiled: active.compiled, directory: key.bundle == nil ? nil : directory?.compiled,
                                               managedAppsDigest: active.managedAppsDigest)
        let stateDirectory = configuration.stateDirectory
        offLoop(on: Self.snapshotWriter, { () -> FileReplacementError? in
            do throws(FileReplacementError) { try snapshot.write(to: stateDirectory, contents) } catch { return error }
            // The body of a large policy is tens of megabytes, built and freed here: give its
            // pages back, or an idle daemon keeps them (glibc keeps freed memory for later).
            Heap.returnFreePagesToKernel()
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

    /// Waits for a snapshot being written: a stop right after a change (a restart soon after
    /// a start) would otherwise leave the next start none. Writing one of 100 000 apps takes
    /// tens of milliseconds; it runs before the state directory's lock is released.
    func finishSnapshotWrite() {
        Self.snapshotWriter.waitUntilIdle()
    }

    /// Writes snapshots one after the other, in the order the policies came into force.
    private static let snapshotWriter = SerialWorkQueue()
}
