import ProctorPolicy
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
