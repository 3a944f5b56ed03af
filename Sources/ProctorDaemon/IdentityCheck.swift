import LinuxIO
import ProctorPolicy

/// Who is calling, as the kernel says: `SO_PEERCRED` at accept time, the executable
/// behind the pid, the user name behind the uid and the groups of the process.
struct PeerIdentity: Sendable, Equatable {
    var pid: Int32
    var uid: UInt32
    var gid: UInt32
    /// The resolved `/proc/PID/exe`, for messages only: a bind mount in another mount
    /// namespace can make any file show any path. Nil when the process is gone or unreadable.
    var executable: String?
    /// The file the process runs (`stat` of `/proc/PID/exe`): what identity is checked on.
    var executableFile: FileIdentity?
    /// Field 22 of `/proc/PID/stat`: with the pid, names this process and no later one.
    var startTime: UInt64?
    var userName: String?
    var groups: [UInt32]
}

extension PeerIdentity {
    /// Reads everything about the process behind `credentials`; what cannot be read stays nil.
    init(reading credentials: PeerCredentials) {
        self.init(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid,
                  executable: try? ProcessIdentity.executablePath(ofPID: credentials.pid),
                  executableFile: try? ProcessIdentity.executableFile(ofPID: credentials.pid),
                  startTime: try? ProcessIdentity.startTime(ofPID: credentials.pid),
                  userName: (try? UserDatabase.userName(forUID: credentials.uid)).flatMap { $0 },
                  groups: (try? ProcessIdentity.supplementaryGroups(ofPID: credentials.pid)) ?? [])
    }
}

/// Whether a peer may claim an app id, and whether it may administer the daemon.
enum IdentityCheck {
    enum Verdict: Equatable {
        /// The peer matches; nothing to remember (no executable rule, or the process was
        /// pinned to this executable before).
        case accepted
        /// The peer runs the very file now at `executable`: accepted, and pinned so that it
        /// stays accepted when that file is replaced.
        case acceptedByFile(executable: String, file: FileIdentity)
        /// Why, in one sentence naming what did not match (logged; sent to the caller).
        case mismatch(String)

        var isAccepted: Bool {
            if case .mismatch = self { return false }
            return true
        }
    }

    /// What proctord finds on its side for an executable path of a `match` block.
    struct ExecutableEvidence {
        /// The file at the path in proctord's own mount namespace, or why it could not be examined.
        var onDisk: Result<FileIdentity, Errno>
        /// The file this very process ran when proctord verified it against the same path
        /// before (a pin), if it did.
        var pinned: FileIdentity?
    }

    /// The app's `match` block against the peer. No `match` block means no process may
    /// claim the app: an app id alone proves nothing.
    ///
    /// The executable is compared as a file (device and inode), never by name. A process
    /// passes when it runs the file now at `match.executable`, or when it is a process
    /// proctord verified against that path before and it still runs the file it ran then
    /// (its executable was replaced since, as by a package upgrade).
    static func verify(_ peer: PeerIdentity, against match: MatchRule?, appID: AppID,
                       evidence: (String) -> ExecutableEvidence) -> Verdict {
        guard let match else {
            return .mismatch("policy for \(appID) has no match block, so no process may register as it")
        }
        var verdict = Verdict.accepted
        if let executable = match.executable {
            guard let running = peer.executableFile else {
                return .mismatch("the executable of pid \(peer.pid) could not be read")
            }
            let found = evidence(executable)
            switch found.onDisk {
            case .success(let onDisk) where onDisk == running:
                if found.pinned != running { verdict = .acceptedByFile(executable: executable, file: running) }
            case _ where found.pinned == running:
                break
            case .success(let onDisk):
                return .mismatch("pid \(peer.pid) runs \(peer.executable ?? "an unnamed file") (\(running)), "
                    + "not the file at \(executable) (\(onDisk))")
            case .failure(let error):
                return .mismatch("\(executable) cannot be examined: \(error)")
            }
        }
        if let users = match.users, !users.contains("*") {
            let name = peer.userName ?? String(peer.uid)
            if !users.contains(name) {
                return .mismatch("user \(name) is not one of \(users.joined(separator: ", "))")
            }
        }
        return verdict
    }

    /// Root and members of the admin group (primary or supplementary) may administer.
    static func mayAdminister(_ peer: PeerIdentity, adminGroupID: UInt32?) -> Bool {
        if peer.uid == 0 { return true }
        guard let adminGroupID else { return false }
        return peer.gid == adminGroupID || peer.groups.contains(adminGroupID)
    }
}
