import ProctorPolicy

/// Who is calling, as the kernel says: `SO_PEERCRED` at accept time, the executable
/// behind the pid, the user name behind the uid and the groups of the process.
struct PeerIdentity: Sendable, Equatable {
    var pid: Int32
    var uid: UInt32
    var gid: UInt32
    /// The resolved `/proc/PID/exe`; nil when the process is gone or unreadable.
    var executable: String?
    var userName: String?
    var groups: [UInt32]
}

/// Whether a peer may claim an app id, and whether it may administer the daemon.
enum IdentityCheck {
    enum Verdict: Equatable {
        case accepted
        /// Why, in one sentence naming what did not match (logged; sent to the caller).
        case mismatch(String)
    }

    /// The app's `match` block against the peer. No `match` block means no process may
    /// claim the app: an app id alone proves nothing.
    static func verify(_ peer: PeerIdentity, against match: MatchRule?, appID: AppID) -> Verdict {
        guard let match else {
            return .mismatch("policy for \(appID) has no match block, so no process may register as it")
        }
        if let executable = match.executable {
            guard let actual = peer.executable else {
                return .mismatch("the executable of pid \(peer.pid) could not be read")
            }
            if actual != executable {
                return .mismatch("executable \(actual) is not \(executable)")
            }
        }
        if let users = match.users, !users.contains("*") {
            let name = peer.userName ?? String(peer.uid)
            if !users.contains(name) {
                return .mismatch("user \(name) is not one of \(users.joined(separator: ", "))")
            }
        }
        return .accepted
    }

    /// Root and members of the admin group (primary or supplementary) may administer.
    static func mayAdminister(_ peer: PeerIdentity, adminGroupID: UInt32?) -> Bool {
        if peer.uid == 0 { return true }
        guard let adminGroupID else { return false }
        return peer.gid == adminGroupID || peer.groups.contains(adminGroupID)
    }
}
