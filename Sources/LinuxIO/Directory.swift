import Glibc

/// Reading directories, for configuration drop-in folders such as `policy.d`, and making
/// private temporary ones.
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

    /// Creates a fresh directory `PARENT/PREFIX.??????` with mode 0700 (`mkdtemp(3)`) and
    /// returns its path.
    public static func makeTemporary(prefix: String, in parent: String) throws(Errno) -> String {
        // mkdtemp replaces the six trailing X's with a unique suffix.
        var template = Array("\(parent)/\(prefix).\(String(repeating: "X", count: 6))".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else { throw .current }
        return String(cString: made)
    }
}
