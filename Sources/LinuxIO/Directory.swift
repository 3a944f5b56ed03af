import Glibc

/// Reading directories, for configuration drop-in folders such as `policy.d`.
public enum Directory {
    /// The names of the entries of directory `path`, without `.` and `..`, in the order the
    /// file system returns them.
    public static func entryNames(_ path: String) throws(Errno) -> [String] {
        try Syscall.directoryEntryNames(path)
    }

    /// Whether `path`, following symbolic links, is a regular file (false when it cannot be
    /// examined at all).
    public static func isRegularFile(_ path: String) -> Bool {
        guard let status = try? Syscall.status(path) else { return false }
        return status.st_mode & S_IFMT == S_IFREG
    }
}
