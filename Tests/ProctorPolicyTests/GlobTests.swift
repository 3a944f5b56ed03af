@testable import ProctorPolicy
import Testing

@Suite struct GlobTests {
    static let appIDCases: [(String, String, Bool)] = [
        ("com.example.notes", "com.example.notes", true),
        ("com.example.notes", "com.example.notesx", false),
        ("com.example.notes", "com.example.note", false),
        ("com.example.*", "com.example.notes", true),
        ("com.example.*", "com.example.", true),
        ("com.example.*", "com.example", false),
        ("com.example.*", "com.example.a.b.c", true),   // `*` in app ids crosses dots
        ("*.notes", "org.x.notes", true),
        ("*.notes", "notes", false),
        ("com.*.notes", "com.a.b.notes", true),
        ("com.*.notes", "com.notes", false),
        ("*", "", true),
        ("*", "anything.at.all", true),
        ("a*b*c", "abc", true),
        ("a*b*c", "aXbYbZc", true),
        ("a*b*c", "acb", false),
        ("a*b*bc", "abbc", true),
        ("a*b*bc", "abc", false),
        ("ab*ba", "aba", false),                        // pieces may not overlap
    ]

    @Test(arguments: appIDCases)
    func appIDGlob(pattern: String, text: String, matches: Bool) {
        #expect(Glob(pattern).matches(text) == matches)
    }

    static let pathCases: [(String, String, Bool)] = [
        ("/tmp/**", "/tmp", true),
        ("/tmp/**", "/tmp/a/b/c", true),
        ("/tmp/**", "/tmpx/a", false),
        ("/tmp/*", "/tmp/a", true),
        ("/tmp/*", "/tmp/a/b", false),
        ("/tmp/*", "/tmp", false),
        ("/a/**/z", "/a/z", true),
        ("/a/**/z", "/a/b/c/z", true),
        ("/a/**/z", "/a/b/c/y", false),
        ("/a/**/b/**/c", "/a/x/b/y/b/z/c", true),
        ("/a/**/b/**/c", "/a/x/y/c", false),
        ("/**", "/", true),
        ("/**", "/any/thing", true),
        ("/**/*.pdf", "/x/y/z.pdf", true),
        ("/**/*.pdf", "/x/y/z.pdf/w", false),
        ("/a/b**", "/a/bcd", true),                    // `**` inside a segment acts as `*`
        ("/a/b**", "/a/bc/d", false),
        ("/a/./b/", "/a/b", true),                     // patterns are resolved like paths
        ("/a/x/../b", "/a/b", true),
        ("/a/b", "/a/b/../b/./", true),
        ("relative/**", "/relative/x", false),         // a relative pattern matches nothing
        ("/a/**", "a/b", false),                       // a relative path never matches
    ]

    @Test(arguments: pathCases)
    func pathGlob(pattern: String, path: String, matches: Bool) {
        #expect(PathGlob(pattern).matches(path) == matches)
    }
}

/// `PathGlob` matches a path's resolved text with literal prefix and suffix checks before the
/// segment walk: compared here with a matcher written from the definition alone (resolve both
/// into segment lists, `**` taking any number of whole segments, any other segment a `Glob`),
/// over every pattern and path of up to three segments from alphabets that hold every form:
/// literals, `*` alone and within a segment, `**` alone and inside a segment, `.`, `..`, empty
/// segments, names starting with a dot (paths), and trailing slashes.
@Suite struct PathGlobReferenceTests {
    static let patternSegments = ["a", "ab", "*", "**", "a*b", "b**", ".", "..", ""]
    static let pathSegments = ["a", "b", "ab", "aab", "..", "", ".x"]

    /// Every `/`-joined sequence of up to `length` of `segments`, with and without a trailing slash.
    static func paths(of segments: [String], upTo length: Int) -> [String] {
        var sequences: [[String]] = [[]]
        var last: [[String]] = [[]]
        for _ in 0..<length {
            last = last.flatMap { sequence in segments.map { sequence + [$0] } }
            sequences += last
        }
        return sequences.flatMap { ["/" + $0.joined(separator: "/"), "/" + $0.joined(separator: "/") + "/"] }
    }

    static func resolved(_ text: String) -> [Substring]? {
        guard text.hasPrefix("/") else { return nil }
        var segments: [Substring] = []
        for segment in text.split(separator: "/") where segment != "." {
            if segment == ".." { _ = segments.popLast() } else { segments.append(segment) }
        }
        return segments
    }

    static func referenceMatches(_ pattern: ArraySlice<Substring>, _ path: ArraySlice<Substring>) -> Bool {
        guard let first = pattern.first else { return path.isEmpty }
        if first == "**" {
            return (0...path.count).contains { referenceMatches(pattern.dropFirst(), path.dropFirst($0)) }
        }
        guard let segment = path.first, Glob(String(first)).matches(String(segment)) else { return false }
        return referenceMatches(pattern.dropFirst(), path.dropFirst())
    }

    @Test func everyShortPatternMatchesAsDefined() {
        let paths = Self.paths(of: Self.pathSegments, upTo: 3).map { ($0, Self.resolved($0)!) } + [("relative/a", nil)]
        var compared = 0
        var differing: [String] = []
        for pattern in Self.paths(of: Self.patternSegments, upTo: 3) + ["relative/**", "", "**"] {
            let glob = PathGlob(pattern)
            let patternSegments = Self.resolved(pattern)
            for (path, pathSegments) in paths {
                let expected = patternSegments.flatMap { pattern in
                    pathSegments.map { Self.referenceMatches(pattern[...], $0[...]) }
                } ?? false
                if glob.matches(path) != expected { differing.append("\(pattern) against \(path): \(expected) expected") }
                compared += 1
            }
        }
        #expect(differing.isEmpty, "\(differing.count) differ, as \(differing.prefix(10))")
        #expect(compared > 1_000_000)
    }

    /// The resolved text of a path is its resolved segments, each after a slash (`/` alone
    /// for the root); relative paths have none.
    @Test func resolvedTextIsTheResolvedSegments() {
        for path in Self.paths(of: Self.pathSegments, upTo: 4) {
            let segments = Self.resolved(path)!
            #expect(LexicalPath.resolve(path) == (segments.isEmpty ? "/" : segments.map { "/" + $0 }.joined()), "\(path)")
        }
        #expect(LexicalPath.resolve("a/b") == nil && LexicalPath.resolve("") == nil)
    }

    /// Whether a path needs resolving is read eight bytes at a time: every form that does,
    /// at every offset within and across the words, and paths that do not, of every length.
    @Test func resolvingIsFoundAtEveryOffset() {
        for length in 0..<26 {
            let name = "/" + String(repeating: "a", count: length)
            for path in [name, name + "//b", name + "/./b", name + "/../b", name + "/.x", name + "/", name + "/b.c/d.",
                         name + "/." , name + "/.."] {
                let segments = Self.resolved(path)!
                #expect(LexicalPath.resolve(path) == (segments.isEmpty ? "/" : segments.map { "/" + $0 }.joined()), "\(path)")
            }
        }
    }
}
