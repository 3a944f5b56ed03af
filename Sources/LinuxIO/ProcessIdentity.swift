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
