import Glibc
import LinuxIO

/// Removes the data directories an app declared (`ProctorDataDirectories` in its Info.plist),
/// and only what is safe to remove: each path, `~`-expanded and with symbolic links resolved
/// (once), must lie strictly inside the user's home or one of the app's systemd state
/// directories (`$STATE_DIRECTORY`, `$CACHE_DIRECTORY`, `$LOGS_DIRECTORY`, `$RUNTIME_DIRECTORY`).
/// Anything else is refused and named in the outcome, never removed.
///
/// The resolved directory is reached from its root one component at a time through held
/// directory descriptors, and its contents removed through them (`openat` with
/// `O_NOFOLLOW`, `unlinkat`): no symbolic link is followed after the check, so a link
/// inside the tree is removed as a link, its target left alone, and a path swapped for a
/// link meanwhile cannot redirect the removal. A declared directory is removed; one that
/// is a symbolic link is emptied and kept, with the link, so the app finds its data
/// directory where it declared it, empty.
struct DataWiper {
    /// What a wipe did, path by path.
    struct Outcome: Equatable {
        var removed: [String] = []
        var refused: [(path: String, reason: String)] = []
        var failed: [(path: String, reason: String)] = []

        var succeeded: Bool { refused.isEmpty && failed.isEmpty }

        /// One line for the administrator (the wipe acknowledgement's message).
        var summary: String {
            var parts = ["removed \(removed.count) director\(removed.count == 1 ? "y" : "ies")"]
            parts += refused.map { "refused \($0.path): \($0.reason)" }
            parts += failed.map { "could not remove \($0.path): \($0.reason)" }
            return parts.joined(separator: "; ")
        }

        static func == (lhs: Outcome, rhs: Outcome) -> Bool {
            lhs.removed == rhs.removed && lhs.refused.map(\.path) == rhs.refused.map(\.path)
                && lhs.failed.map(\.path) == rhs.failed.map(\.path)
        }
    }

    let home: String?
    let stateDirectories: [String]

    /// The user's home (`$HOME`, else the password database) and the state directories systemd
    /// handed the process.
    static func forCurrentProcess(environment: [String: String]) -> DataWiper {
        var home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 }
        if home == nil, let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir {
            home = String(cString: directory)
        }
        let stateDirectories = ["STATE_DIRECTORY", "CACHE_DIRECTORY", "LOGS_DIRECTORY", "RUNTIME_DIRECTORY"]
            .compactMap { environment[$0] }
            .flatMap { $0.split(separator: ":").map(String.init) }
        return DataWiper(home: home, stateDirectories: stateDirectories)
    }

    /// Removes each declared directory that passes the checks; `keepingDirectories` empties them
    /// instead, for a process the export rule confines: Landlock lets it change what lies beneath
    /// its data directories, not the folders that hold them, and it could not create them again.
    func wipe(_ declared: [String], keepingDirectories: Bool = false) -> Outcome {
        var outcome = Outcome()
        let roots = self.roots
        for entry in declared {
            switch check(entry, roots: roots) {
            case .refuse(let reason):
                outcome.refused.append((entry, reason))
            case .absent:
                outcome.removed.append(entry)
            case .remove(var target):
                if keepingDirectories { target.keepDirectory = true }
                do {
                    try remove(target)
                    outcome.removed.append(entry)
                } catch {
                    outcome.failed.append((entry, "\(error)"))
                }
            }
        }
        return outcome
    }

    /// A resolved directory to remove, and the resolved root it lies in.
    struct Target: Equatable {
        var root: String
        /// The components from `root` to the directory, none empty, `.` or `..`.
        var components: [Substring]
        /// The declared path is a symbolic link: empty the directory it resolves to, keep it.
        var keepDirectory: Bool
    }

    enum Verdict: Equatable {
        case remove(Target)
        case absent
        case refuse(String)
    }

    /// Walks from the root to the target through held descriptors, never following a
    /// link, then removes what the target holds (and the target, unless it is kept). A
    /// target that turned out to be a file is removed as one.
    private func remove(_ target: Target) throws(Errno) {
        var parent = try FileDescriptor.openDirectory(atPath: target.root)
        defer { try? parent.close() }
        for component in target.components.dropLast() {
            let next = try parent.openDirectory(String(component))
            try? parent.close()
            parent = next
        }
        let name = String(target.components.last!)
        let directory: FileDescriptor
        do {
            directory = try parent.openDirectory(name)
        } catch .init(rawValue: ENOTDIR), .init(rawValue: ELOOP) {
            return try parent.removeEntry(name)  // a file, or a link put there since: removed as such
        }
        defer { try? directory.close() }
        try directory.removeContents()
        if !target.keepDirectory { try parent.removeEntry(name, directory: true) }
    }

    /// The folders a declared directory must lie in: the home and the state directories, resolved.
    private var roots: [String] {
        ([home].compactMap { $0 } + stateDirectories).compactMap(Self.resolved).filter { $0 != "/" }
    }

    /// Whether `actual`, a path with no link in it, lies inside the home or a state directory
    /// (not one of them itself): where a wipe reaches.
    func reaches(resolved actual: String) -> Bool {
        roots.contains { Self.lies(actual, inside: $0) }
    }

    private static func lies(_ actual: String, inside root: String) -> Bool {
        actual.utf8.count > root.utf8.count && actual.isBeneath(root)
    }

    /// `entry` as an absolute, normalised path if a wipe would accept it (inside the home or a
    /// state directory), else why not — so data is only ever kept where a wipe can remove it.
    func usablePath(_ entry: String) -> Result<String, DataWiperRefusal> {
        switch check(entry, roots: roots) {
        case .refuse(let reason): .failure(DataWiperRefusal(reason: reason))
        case .absent, .remove: expanded(entry).map(Self.lexicallyNormalised)
        }
    }

    /// `~` and `~/…` expanded against the home; other paths must be absolute.
    private func expanded(_ entry: String) -> Result<String, DataWiperRefusal> {
        if entry == "~" || entry.hasPrefix("~/") {
            guard let home else { return .failure(DataWiperRefusal(reason: "no home directory to expand ~ against")) }
            return .success(home + entry.dropFirst())
        }
        if entry.hasPrefix("~") { return .failure(DataWiperRefusal(reason: "only ~ and ~/ are expanded, not another user's ~name")) }
        guard entry.hasPrefix("/") else { return .failure(DataWiperRefusal(reason: "not an absolute path (nor ~/…)")) }
        return .success(entry)
    }

    func check(_ entry: String, roots: [String]) -> Verdict {
        let path: String
        switch expanded(entry) {
        case .success(let expandedPath): path = expandedPath
        case .failure(let refusal): return .refuse(refusal.reason)
        }
        let lexical = Self.lexicallyNormalised(path)
        // Resolved once: what is removed is reached from this answer, never from the path again.
        // A path that does not exist has nothing to remove, but must still have been allowed.
        let resolved = Self.resolved(lexical)
        let actual = resolved ?? lexical
        guard let root = roots.first(where: { Self.lies(actual, inside: $0) }) else {
            return .refuse("outside the user's home and the app's state directories" + (actual != lexical ? " (resolves to \(actual))" : ""))
        }
        guard resolved != nil else { return .absent }
        var status = stat()
        let isLink = lstat(lexical, &status) == 0 && (status.st_mode & S_IFMT) == S_IFLNK
        return .remove(Target(root: root, components: Array(actual.pathComponents.dropFirst(root.pathComponents.count)),
                              keepDirectory: isLink))
    }

    static func resolved(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `.` and empty segments dropped, `..` removing the folder before it.
    static func lexicallyNormalised(_ path: String) -> String {
        var segments: [Substring] = []
        for segment in path.pathComponents {
            if segment == "." { continue }
            if segment == ".." { _ = segments.popLast(); continue }
            segments.append(segment)
        }
        return "/" + segments.joined(separator: "/")
    }
}

/// Why a declared data directory is not used or removed.
struct DataWiperRefusal: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}
