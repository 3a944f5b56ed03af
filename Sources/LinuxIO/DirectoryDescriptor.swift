public import Glibc

/// Work inside a directory through a descriptor held on it (`openat`, `unlinkat`), so a
/// path that is swapped for a symbolic link midway cannot redirect the work elsewhere:
/// every step is relative to a directory already open, and no step follows a link.
extension FileDescriptor {
    /// Opens the directory at `path` (absolute, or relative to the working directory),
    /// refusing a symbolic link as its last component (`ELOOP` or `ENOTDIR`).
    public static func openDirectory(atPath path: String) throws(Errno) -> FileDescriptor {
        try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
    }

    /// Opens the directory `name` (one path component) inside this directory, refusing a
    /// symbolic link (`ELOOP` or `ENOTDIR`) and anything else that is not a directory.
    public func openDirectory(_ name: String) throws(Errno) -> FileDescriptor {
        let opened = openat(rawValue, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard opened >= 0 else { throw Errno.current }
        return FileDescriptor(rawValue: opened)
    }

    /// Removes the entry `name` of this directory: a file, a symbolic link (as a link,
    /// never its target) or, with `directory`, an empty directory.
    public func removeEntry(_ name: String, directory: Bool = false) throws(Errno) {
        guard unlinkat(rawValue, name, directory ? AT_REMOVEDIR : 0) == 0 else { throw Errno.current }
    }

    /// The names in this directory, without `.` and `..`.
    public func entryNames() throws(Errno) -> [String] {
        // fdopendir takes over the descriptor it is given: give it a duplicate, so this
        // one stays open, and rewind, since the duplicate shares the read position.
        let duplicate = fcntl(rawValue, F_DUPFD_CLOEXEC, 0)
        guard duplicate >= 0 else { throw Errno.current }
        guard let stream = fdopendir(duplicate) else {
            let error = Errno.current
            Glibc.close(duplicate)
            throw error
        }
        defer { closedir(stream) }
        rewinddir(stream)
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw Errno.current }
                return names
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
    }

    /// Removes everything inside this directory, depth first, and leaves it empty. Symbolic
    /// links are removed as links; a subdirectory is opened relative to this one without
    /// following links, so nothing outside the tree is touched.
    public func removeContents() throws(Errno) {
        for name in try entryNames() {
            do {
                try removeEntry(name)
            } catch .init(rawValue: EISDIR) {
                let child = try openDirectory(name)
                defer { try? child.close() }
                try child.removeContents()
                try removeEntry(name, directory: true)
            } catch .noSuchFileOrDirectory {
                continue  // removed by someone else meanwhile: what was asked
            }
        }
    }
}
