import Foundation
import Glibc

/// Removes the data directories an app declared (`ProctorDataDirectories` in its Info.plist),
/// and only what is safe to remove: each path, `~`-expanded and with symbolic links resolved,
/// must lie strictly inside the user's home or one of the app's systemd state directories
/// (`$STATE_DIRECTORY`, `$CACHE_DIRECTORY`, `$LOGS_DIRECTORY`, `$RUNTIME_DIRECTORY`).
/// Anything else is refused and named in the outcome, never removed.
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

    /// Removes each declared directory that passes the checks.
    func wipe(_ declared: [String]) -> Outcome {
        var outcome = Outcome()
        let roots = ([home].compactMap { $0 } + stateDirectories).compactMap(Self.resolved).filter { $0 != "/" }
        for entry in declared {
            switch check(entry, roots: roots) {
            case .refuse(let reason):
                outcome.refused.append((entry, reason))
            case .absent:
                outcome.removed.append(entry)
            case .remove(let path):
                do {
                    try FileManager.default.removeItem(atPath: path)
                    outcome.removed.append(entry)
                } catch {
                    outcome.failed.append((entry, "\(error.localizedDescription)"))
                }
            }
        }
        return outcome
    }

    enum Verdict: Equatable {
        case remove(String)
        case absent
        case refuse(String)
    }

    func check(_ entry: String, roots: [String]) -> Verdict {
        var path = entry
        if path == "~" || path.hasPrefix("~/") {
            guard let home else { return .refuse("no home directory to expand ~ against") }
            path = home + path.dropFirst()
        } else if path.hasPrefix("~") {
            return .refuse("only ~ and ~/ are expanded, not another user's ~name")
        }
        guard path.hasPrefix("/") else { return .refuse("not an absolute path (nor ~/…)") }
        let lexical = Self.lexicallyNormalised(path)
        // A path that does not exist has nothing to remove, but must still have been allowed.
        let exists = access(lexical, F_OK) == 0
        let actual = exists ? (Self.resolved(lexical) ?? lexical) : lexical
        guard roots.contains(where: { actual.hasPrefix($0 + "/") }) else {
            return .refuse("outside the user's home and the app's state directories" + (actual != lexical ? " (resolves to \(actual))" : ""))
        }
        // Removing the declared path unlinks a symbolic link rather than emptying its target.
        return exists ? .remove(lexical) : .absent
    }

    static func resolved(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `.` and empty segments dropped, `..` removing the folder before it.
    static func lexicallyNormalised(_ path: String) -> String {
        var segments: [Substring] = []
        for segment in path.split(separator: "/", omittingEmptySubsequences: true) {
            if segment == "." { continue }
            if segment == ".." { _ = segments.popLast(); continue }
            segments.append(segment)
        }
        return "/" + segments.joined(separator: "/")
    }
}
