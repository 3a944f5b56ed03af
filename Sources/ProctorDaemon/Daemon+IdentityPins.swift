import Glibc
import JSONCore
import LinuxIO
import ProctorPolicy
import ProctorStore

/// The identity rule's memory: a process proctord verified keeps its identity while it runs,
/// even after its executable is replaced on disk (a package upgrade leaves it running the
/// old, deleted file) and across restarts of proctord. A process is named by this boot's
/// id, its pid and its start time, so a later process reusing the pid is a stranger.
extension Daemon {
    /// This boot's id as 32 hex digits, from `/proc`, else from `$PROCTOR_BOOT_ID`, which
    /// proctord.service sets (`%b`) because `ProcSubset=pid` hides `/proc/sys`; nil
    /// without both (then nothing is pinned).
    static let bootID: String? = ((try? ProcessIdentity.bootID()) ?? getenv("PROCTOR_BOOT_ID").map { String(cString: $0) })
        .map { $0.filter { $0 != "-" } }.flatMap { $0.isEmpty ? nil : $0 }

    /// `IdentityCheck.verify` with what proctord sees: the file at each path in its own mount
    /// namespace, and the pins of this process. A process verified by its file is pinned.
    func verifyIdentity(of peer: PeerIdentity, against match: MatchRule?, appID: AppID) -> IdentityCheck.Verdict {
        let pins = identityPins(of: peer)
        let verdict = IdentityCheck.verify(peer, against: match, appID: appID) { path in
            IdentityCheck.ExecutableEvidence(
                onDisk: Result { () throws(Errno) in try FileIdentity(ofPath: path) },
                // The path as written, by bytes: another Unicode form of it is another file.
                pinned: pins.first { $0.executable.hasSameBytes(as: path) }
                    .map { FileIdentity(device: $0.device, inode: $0.inode) })
        }
        if case .acceptedByFile(let executable, let file) = verdict, let bootID = Self.bootID, let startTime = peer.startTime {
            pruneIdentityPins()
            do {
                try store.recordIdentityPin(IdentityPin(bootID: bootID, pid: peer.pid, startTime: startTime, executable: executable,
                                                        device: file.device, inode: file.inode), at: Clock.now())
            } catch {
                logStorageFailure("pinning the identity of pid \(peer.pid)", error)
            }
        }
        return verdict
    }

    /// Forgets the pins of processes that are gone (another boot, or no process with that
    /// pid and start time): at start-up, and before each new pin, so the table holds about
    /// as many rows as verified processes are running.
    func pruneIdentityPins() {
        do {
            let gone = try store.identityPins().filter { pin in
                pin.bootID != Self.bootID || (try? ProcessIdentity.startTime(ofPID: pin.pid)) != pin.startTime
            }
            try store.removeIdentityPins(gone)
        } catch {
            logStorageFailure("forgetting the identities of processes that ended", error)
        }
    }

    private func identityPins(of peer: PeerIdentity) -> [IdentityPin] {
        guard let bootID = Self.bootID, let startTime = peer.startTime else { return [] }
        do {
            return try store.identityPins(bootID: bootID, pid: peer.pid, startTime: startTime)
        } catch {
            logStorageFailure("reading the identity pins of pid \(peer.pid)", error)
            return []
        }
    }
}
