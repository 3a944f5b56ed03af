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
/// point for the last `**` seen, exact for this language, and allocates nothing.
public struct PathGlob: Sendable, Hashable, CustomStringConvertible {
    enum Segment: Sendable, Hashable {
        /// `**`: any number of whole segments.
        case anyFolders
        /// One segment's name, with `*` matching within it.
        case name(Glob)
    }

    public let pattern: String
    /// Nil when the pattern is not absolute.
    let segments: [Segment]?

    public init(_ pattern: String) {
        self.pattern = pattern
        segments = LexicalPath.resolve(pattern).map { resolved in
            resolved.utf8.split(separator: UInt8(ascii: "/")).map { name in
                name.elementsEqual("**".utf8) ? .anyFolders : .name(Glob(String(decoding: name, as: UTF8.self)))
            }
        }
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
        guard let segments else { return false }
        var patternIndex = 0
        var pathIndex = 0
        var backtrackPattern = -1
        var backtrackPath = 0
        while pathIndex < pathSegments.count {
            if patternIndex < segments.count {
                switch segments[patternIndex] {
                case .anyFolders:
                    backtrackPattern = patternIndex
                    backtrackPath = pathIndex
                    patternIndex += 1
                    continue
                case .name(let glob):
                    let segment = pathSegments[pathIndex]
                    if glob.matches(utf8: UnsafeBufferPointer(rebasing: bytes[Int(segment.start)..<Int(segment.end)])) {
                        patternIndex += 1
                        pathIndex += 1
                        continue
                    }
                }
            }
            guard backtrackPattern >= 0 else { return false }
            // Let the last `**` take one more folder and retry what follows it.
            backtrackPath += 1
            pathIndex = backtrackPath
            patternIndex = backtrackPattern + 1
        }
        while patternIndex < segments.count, case .anyFolders = segments[patternIndex] { patternIndex += 1 }
        return patternIndex == segments.count
    }
}
