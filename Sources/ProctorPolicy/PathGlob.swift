/// A glob over absolute paths (`dlp.fileExport.allow` / `deny`), compiled ahead.
///
/// The pattern is split at `/` and resolved lexically like the paths it is matched against
/// (`.`, `..`, repeated and trailing slashes). A segment that is exactly `**` matches zero or
/// more whole folders (`/tmp/**` matches `/tmp`, `/tmp/a` and `/tmp/a/b`; `/a/**/z` matches
/// `/a/z`); in any other segment `*` matches a run of characters within that one segment and
/// never crosses `/` (a `**` inside a longer segment, as in `/a/b**`, therefore acts as `*`).
/// A pattern that is not absolute matches no path (the policy parser refuses such patterns).
///
/// The compiled pattern is its resolved text in one buffer, so matching a cold pattern costs
/// one cache miss rather than one per segment, and two lengths found at compile time: the
/// literal segments it starts with and the literal bytes after its last `*`, which every
/// path it matches starts and ends with, so most paths are told apart by two comparisons.
/// What lies between is matched segment by segment, segments found at their slashes, with a
/// single backtracking point for the last `**` seen, exact for this language, allocating
/// nothing.
public struct PathGlob: Sendable, Hashable, CustomStringConvertible {
    public let pattern: String
    /// The resolved pattern (`/a/*/b`; empty for `/`, so every segment follows a slash); nil
    /// when the pattern is not absolute.
    let resolved: [UInt8]?
    /// The bytes of `resolved` up to its first segment with a `*`: all of it when it has none.
    private let literalPrefix: Int
    /// The bytes of `resolved` after its last `*` (0 when it has none).
    private let literalSuffix: Int

    public init(_ pattern: String) {
        self.pattern = pattern
        let resolved = LexicalPath.resolve(pattern).map { $0 == "/" ? [] : Array($0.utf8) }
        self.resolved = resolved
        let bytes = resolved ?? []
        var prefix = 0
        while prefix < bytes.count {
            let next = bytes[(prefix + 1)...].firstIndex(of: Self.slash) ?? bytes.count
            if bytes[prefix..<next].contains(Self.star) { break }
            prefix = next
        }
        literalPrefix = prefix
        literalSuffix = bytes.lastIndex(of: Self.star).map { bytes.count - $0 - 1 } ?? 0
    }

    public var description: String { pattern }

    /// Whether the absolute `path`, resolved lexically, matches; false for a relative path.
    public func matches(_ path: String) -> Bool {
        var path = path
        return path.withUTF8 { bytes in LexicalPath.withResolved(bytes) { matches(resolved: $0) } ?? false }
    }

    /// Whether the path whose resolved form (`LexicalPath.withResolved`) is `path` matches.
    func matches(resolved path: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let resolved else { return false }
        let prefix = literalPrefix, suffix = literalSuffix
        return resolved.withUnsafeBufferPointer { pattern in
            guard prefix < pattern.count else { return path.count == prefix && Self.same(pattern, path, at: 0, count: prefix) }
            // The literal segments the pattern starts with, as whole segments of the path, and
            // the bytes after its last `*`: cheap refusals of most paths.
            guard path.count >= prefix, prefix == path.count || path[prefix] == Self.slash,
                  Self.same(pattern, path, at: 0, count: prefix),
                  path.count >= suffix,
                  Self.same(UnsafeBufferPointer(rebasing: pattern[(pattern.count - suffix)...]), path,
                            at: path.count - suffix, count: suffix) else { return false }
            return Self.matches(pattern: pattern, path: path, from: prefix)
        }
    }

    private static let slash = UInt8(ascii: "/")
    private static let star = UInt8(ascii: "*")

    /// Whether `count` bytes of `path` from `start` are the first `count` bytes of `bytes`.
    private static func same(_ bytes: UnsafeBufferPointer<UInt8>, _ path: UnsafeBufferPointer<UInt8>, at start: Int,
                             count: Int) -> Bool {
        count == 0 || AppTable.memoryEquals(bytes.baseAddress!, path.baseAddress! + start, count)
    }

    /// Whether `path` matches `pattern` (both resolved: each segment after a slash) from
    /// `start`, a position of both at a slash or at their ends.
    private static func matches(pattern: UnsafeBufferPointer<UInt8>, path: UnsafeBufferPointer<UInt8>, from start: Int) -> Bool {
        /// The segment of `text` whose slash is at `slashAt`: its bytes and where the next slash is.
        func segment(of text: UnsafeBufferPointer<UInt8>, at slashAt: Int) -> (name: UnsafeBufferPointer<UInt8>, next: Int) {
            var end = slashAt + 1
            while end < text.count && text[end] != slash { end += 1 }
            return (UnsafeBufferPointer(rebasing: text[(slashAt + 1)..<end]), end)
        }
        func isAnyFolders(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
            name.count == 2 && name[0] == star && name[1] == star
        }
        var patternAt = start
        var pathAt = start
        var backtrackPattern = -1
        var backtrackPath = 0
        while pathAt < path.count {
            if patternAt < pattern.count {
                let (name, next) = segment(of: pattern, at: patternAt)
                if isAnyFolders(name) {
                    backtrackPattern = next
                    backtrackPath = pathAt
                    patternAt = next
                    continue
                }
                let (pathName, pathNext) = segment(of: path, at: pathAt)
                if Glob.matches(pattern: name, text: pathName) {
                    patternAt = next
                    pathAt = pathNext
                    continue
                }
            }
            guard backtrackPattern >= 0 else { return false }
            // Let the last `**` take one more folder and retry what follows it.
            backtrackPath = segment(of: path, at: backtrackPath).next
            pathAt = backtrackPath
            patternAt = backtrackPattern
        }
        while patternAt < pattern.count {
            let (name, next) = segment(of: pattern, at: patternAt)
            guard isAnyFolders(name) else { return false }
            patternAt = next
        }
        return true
    }
}
