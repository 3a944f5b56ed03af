import JSONCore
import LinuxIO
import ProctorPolicy

/// Who is calling, as the kernel says: the ids it stamped (`SO_PEERCRED` at accept time for
/// a connection, `SCM_CREDENTIALS` for one message's sender), the executable behind the pid,
/// the user name behind the uid and the groups of the process.
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
    /// The journal fields that name the peer in a log line (`PEER_PID=`, `PEER_UID=`, `PEER_EXE=`).
    var logFields: [(String, String)] {
        [(DaemonEventField.peerPID, String(pid)), (DaemonEventField.peerUID, String(uid)),
         (DaemonEventField.peerExecutable, executable ?? "(unknown)")]
    }

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

/// Why the sender of a message cannot be named as one live process (sent to the caller).
struct UnverifiableSender: Error, Equatable {
    let reason: String
}

extension PeerIdentity {
    /// The process that sent a message, checked polkit-style (CVE-2013-4288): the ids are
    /// the kernel's stamp on the message, the executable, start time and groups are read
    /// from `/proc/PID`, and then the pid must still name the very process that sent it.
    /// With the sender's pidfd that process must still be alive (a live process keeps its
    /// pid, so what was read is its own); without one (kernels before 6.5) its start time
    /// must be the same before and after the reading — weaker: the pid may have been
    /// reused before the first look.
    ///
    /// `sender` nil means the message's bytes came from more than one process (a
    /// connection shared after a fork): no one process sent it, so none is verified.
    init(verifyingSender sender: SenderCredentials?) throws(UnverifiableSender) {
        guard let sender else {
            throw UnverifiableSender(reason: "the message was written by more than one process (a connection shared "
                + "after fork), so its sender cannot be verified; send Register from one process")
        }
        let credentials = PeerCredentials(pid: sender.pid, uid: sender.uid, gid: sender.gid)
        if let process = sender.process {
            self.init(reading: credentials)
            guard (try? process.isAlive) == true else {
                throw UnverifiableSender(reason: "pid \(sender.pid) exited before it could be verified")
            }
        } else {
            let before = try? ProcessIdentity.startTime(ofPID: sender.pid)
            self.init(reading: credentials)
            guard let before, startTime == before, (try? ProcessIdentity.startTime(ofPID: sender.pid)) == before else {
                throw UnverifiableSender(reason: "pid \(sender.pid) exited or was replaced while it was being verified")
            }
        }
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
            // By bytes: "\u{212A}ate" (KELVIN SIGN) is canonically equivalent to "Kate", another account.
            if !users.contains(where: { $0.hasSameBytes(as: name) }) {
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
