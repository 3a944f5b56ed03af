public import Glibc
import JSONCore

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

    /// Collects the files' statuses as `PolicyDirectory` reads them.
    struct Builder {
        private var text: [UInt8] = []
        private var isSettled = true
        private let readBegan: timespec

        init() {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            readBegan = now
        }

        /// `status` is the file's, taken on the descriptor its bytes are read from; nil when
        /// `fstat` failed, which leaves the identity unsettled, as does anything but a regular
        /// file (a FIFO's bytes change with every read, its status need not).
        mutating func add(name: String, status: stat?) {
            guard let status, status.st_mode & S_IFMT == S_IFREG else {
                isSettled = false
                return
            }
            text += name.utf8
            text.append(0)
            text += "\(status.st_dev) \(status.st_ino) \(status.st_size) \(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec) "
                .utf8
            text += "\(status.st_ctim.tv_sec).\(status.st_ctim.tv_nsec)\n".utf8
            let settledBefore = readBegan.tv_sec - Int(PolicyDirectoryIdentity.settleSeconds)
            if status.st_ctim.tv_sec > settledBefore
                || (status.st_ctim.tv_sec == settledBefore && status.st_ctim.tv_nsec >= readBegan.tv_nsec)
            {
                isSettled = false
            }
        }

        func finish() -> PolicyDirectoryIdentity {
            PolicyDirectoryIdentity(digest: SHA256.hexDigest(text), isSettled: isSettled)
        }
    }
}
