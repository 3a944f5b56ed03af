/// A glob over absolute paths (`dlp.fileExport.allow` / `deny`), compiled ahead.
///
/// The pattern is split at `/` and resolved lexically like the paths it is matched against
/// (`.`, `..`, repeated and trailing slashes). A segment that is exactly `**` matches zero or
/// more whole folders (`/tmp/**` matches `/tmp`, `/tmp/a` and `/tmp/a/b`; `/a/**/z` matches
/// `/a/z`); in any other segment `*` matches a run of characters within that one segment and
/// never crosses `/` (a `**` inside a longer segment, as in `/a/b**`, therefore acts as `*`).
/// A pattern that is not absolute matches no path (the policy parser refuses such patterns).
///
/// Matching walks the path's segments once per pattern segment with a single backtracking
/// point for the last `**` seen, exact for this language, and allocates nothing. The compiled
/// pattern is its resolved text in one buffer (segments found at their slashes while
/// matching), so matching a cold pattern costs one cache miss rather than one per segment.
public struct PathGlob: Sendable, Hashable, CustomStringConvertible {
    public let pattern: String
    /// The resolved pattern (`/a/*/b`; empty for `/`, so every segment follows a slash); nil
    /// when the pattern is not absolute.
    let resolved: [UInt8]?

    public init(_ pattern: String) {
        self.pattern = pattern
        resolved = LexicalPath.resolve(pattern).map { $0 == "/" ? [] : Array($0.utf8) }
    }

    public var description: String { pattern }

    /// Whether the absolute `path`, resolved lexically, matches; false for a relative path.
    public func matches(_ path: String) -> Bool {
        var path = path
        return path.withUTF8 { bytes in
            LexicalPath.withSegments(of: bytes) { matches(bytes, $1) } ?? false
        }
    }

    /// Whether the resolved path given by `bytes` and its `pathSegments` matches.
    func matches(_ bytes: UnsafeBufferPointer<UInt8>, _ pathSegments: UnsafeBufferPointer<PathSegment>) -> Bool {
        guard let resolved else { return false }
        return resolved.withUnsafeBufferPointer { Self.matches(pattern: $0, bytes, pathSegments) }
    }

    private static let slash = UInt8(ascii: "/")

    /// `pattern` is a resolved pattern: each segment starts after a slash at a position below
    /// `pattern.count`, which is where the pattern ends.
    private static func matches(pattern: UnsafeBufferPointer<UInt8>, _ bytes: UnsafeBufferPointer<UInt8>,
                                _ pathSegments: UnsafeBufferPointer<PathSegment>) -> Bool {
        /// The segment whose slash is at `slashAt`: its bytes and where the next slash is.
        func segment(at slashAt: Int) -> (name: UnsafeBufferPointer<UInt8>, next: Int) {
            var end = slashAt + 1
            while end < pattern.count && pattern[end] != slash { end += 1 }
            return (UnsafeBufferPointer(rebasing: pattern[(slashAt + 1)..<end]), end)
        }
        func isAnyFolders(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
            name.count == 2 && name[0] == UInt8(ascii: "*") && name[1] == UInt8(ascii: "*")
        }
        var patternAt = 0
        var pathIndex = 0
        var backtrackPattern = -1
        var backtrackPath = 0
        while pathIndex < pathSegments.count {
            if patternAt < pattern.count {
                let (name, next) = segment(at: patternAt)
                if isAnyFolders(name) {
                    backtrackPattern = next
                    backtrackPath = pathIndex
                    patternAt = next
                    continue
                }
                let path = pathSegments[pathIndex]
                if Glob.matches(pattern: name, text: UnsafeBufferPointer(rebasing: bytes[Int(path.start)..<Int(path.end)])) {
                    patternAt = next
                    pathIndex += 1
                    continue
                }
            }
            guard backtrackPattern >= 0 else { return false }
            // Let the last `**` take one more folder and retry what follows it.
            backtrackPath += 1
            pathIndex = backtrackPath
            patternAt = backtrackPattern
        }
        while patternAt < pattern.count {
            let (name, next) = segment(at: patternAt)
            guard isAnyFolders(name) else { return false }
            patternAt = next
        }
        return true
    }
}
