public import Glibc

/// Facts about a running process read from `/proc`, used to check who a peer is.
///
/// A pid names a process only while it lives: read these right after accepting the
/// connection, while the peer still holds it open.
public enum ProcessIdentity {
    /// The resolved path of the executable process `pid` runs (`readlink /proc/PID/exe`).
    /// The kernel appends `" (deleted)"` when the file was removed or replaced since exec.
    public static func executablePath(ofPID pid: pid_t) throws(Errno) -> String {
        try Syscall.readlink("/proc/\(pid)/exe")
    }

    /// The file process `pid` runs: `stat` on the `/proc/PID/exe` magic link follows it to
    /// the very inode the process executed, whichever mount namespace it was reached
    /// through, and even after that file was deleted or replaced. Compare it with
    /// `FileIdentity(ofPath:)` of the expected path, never the path string `executablePath`
    /// reports (a bind mount in another namespace makes any file show the trusted path).
    public static func executableFile(ofPID pid: pid_t) throws(Errno) -> FileIdentity {
        try FileIdentity(ofPath: "/proc/\(pid)/exe")
    }

    /// When process `pid` started, in clock ticks after boot (field 22 of `/proc/PID/stat`).
    /// With the boot id it tells a process from a later one that reuses its pid; `exec`
    /// keeps it.
    public static func startTime(ofPID pid: pid_t) throws(Errno) -> UInt64 {
        let stat = try readProcFile("/proc/\(pid)/stat", limit: 4096)
        // Field 2, the command name, is in parentheses and may itself hold spaces and
        // parentheses: count from the last closing one, after which field 3 comes.
        guard let close = stat.utf8.lastIndex(of: UInt8(ascii: ")")) else { throw Errno(rawValue: EINVAL) }
        let fields = stat[stat.utf8.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let ticks = UInt64(fields[19]) else { throw Errno(rawValue: EINVAL) }
        return ticks
    }

    /// This boot's random id (`/proc/sys/kernel/random/boot_id`): process start times
    /// count from boot, so they mean something only together with it.
    public static func bootID() throws(Errno) -> String {
        String(try readProcFile("/proc/sys/kernel/random/boot_id", limit: 64).prefix { $0 != "\n" })
    }

    /// The supplementary group ids of process `pid` (the `Groups:` line of `/proc/PID/status`).
    public static func supplementaryGroups(ofPID pid: pid_t) throws(Errno) -> [gid_t] {
        let status = try readProcFile("/proc/\(pid)/status")
        for line in status.split(separator: "\n") where line.hasPrefix("Groups:") {
            return line.dropFirst("Groups:".count)
                .split(whereSeparator: { $0 == " " || $0 == "\t" })
                .compactMap { gid_t($0) }
        }
        return []
    }

    /// Reads a `/proc` file to its end (they report a size of 0). A process in tens of
    /// thousands of groups has a long status file, so the limit is generous.
    private static func readProcFile(_ path: String, limit: Int = 4 << 20) throws(Errno) -> String {
        let descriptor = try FileDescriptor.open(path, O_RDONLY)
        defer { try? descriptor.close() }
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while contents.count < limit {
            let count = try chunk.withUnsafeMutableBytes { raw in
                Result { () throws(Errno) in try descriptor.read(into: raw) }
            }.get()
            if count == 0 { break }
            contents += chunk[..<count]
        }
        return String(decoding: contents, as: UTF8.self)
    }
}

/// A file itself rather than a name for it: its device and inode numbers. Two paths name
/// the same file exactly when these agree (while the file exists; a deleted file's inode
/// number may be given to a new file).
public struct FileIdentity: Sendable, Hashable, CustomStringConvertible {
    public let device: UInt64
    public let inode: UInt64

    public init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }

    /// The file `path` names, symbolic links followed (`stat`).
    public init(ofPath path: String) throws(Errno) {
        var status = stat()
        guard stat(path, &status) == 0 else { throw Errno.current }
        self.init(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }

    /// For messages: `dev 2049 inode 254587`.
    public var description: String { "dev \(device) inode \(inode)" }
}

/// Look-ups in the user and group databases (NSS: `/etc/passwd`, `/etc/group`, sssd, …).
public enum UserDatabase {
    /// The name of user `uid`, or nil when the database has no such user.
    public static func userName(forUID uid: uid_t) throws(Errno) -> String? {
        try Syscall.userName(forUID: uid)
    }

    /// The id of the group called `name`, or nil when the database has no such group.
    public static func groupID(named name: String) throws(Errno) -> gid_t? {
        try Syscall.groupID(named: name)
    }
}
