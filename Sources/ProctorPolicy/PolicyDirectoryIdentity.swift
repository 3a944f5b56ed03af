/// What identifies the files a policy directory was read from, without reading them again: each
/// file's name, device, inode, size, modification and status-change times (`ctime`, which no user
/// can set: any write, `chmod`, rename or `touch` moves it to the present). A file written,
/// added, removed or replaced gives another identity — unless it changed twice within one tick of
/// the file system's clock, while it was read: `isSettled` rules that out.
public struct PolicyDirectoryIdentity: Sendable, Hashable {
    /// SHA-256 (lowercase hex) of the files' names and statuses, in merge order.
    public let digest: String
    /// Every file's last change (`ctime`) was at least `settleSeconds` before its reading began. A
    /// file changed just before (or while) it was read can change again within the same tick of
    /// its file system's clock (up to 2 s on some) without its times moving: such an identity
    /// may not stand for the bytes read.
    public let isSettled: Bool

    /// The coarsest timestamp granularity of the file systems Linux mounts (FAT's 2 s).
    public static let settleSeconds = 2

    public init(digest: String, isSettled: Bool) {
        self.digest = digest
        self.isSettled = isSettled
    }
}
