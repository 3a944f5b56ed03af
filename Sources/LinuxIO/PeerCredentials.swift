public import Glibc

/// Who is at the other end of a connected Unix socket, as the kernel recorded it when the peer
/// called `connect` (SO_PEERCRED): it cannot be forged by the peer.
public struct PeerCredentials: Hashable, Sendable, CustomStringConvertible {
    /// The peer's process id at connect time.
    public let pid: pid_t
    /// The peer's effective user id at connect time.
    public let uid: uid_t
    /// The peer's effective group id at connect time.
    public let gid: gid_t

    /// Credentials with the given ids.
    public init(pid: pid_t, uid: uid_t, gid: gid_t) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    /// The credentials of the peer of the connected Unix socket `socket`.
    public static func of(_ socket: FileDescriptor) throws(Errno) -> PeerCredentials {
        let (pid, uid, gid) = try Syscall.peerCredentials(socket.rawValue)
        return PeerCredentials(pid: pid, uid: uid, gid: gid)
    }

    public var description: String { "pid \(pid) uid \(uid) gid \(gid)" }
}
