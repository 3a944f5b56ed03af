@testable import ProctorPolicy
import Testing

/// `GlobList.firstMatch` finds what trying each pattern in order finds, by its bytes, whether
/// its literals are compared one by one (a few) or looked up by their hash (many).
@Suite struct GlobListTests {
    /// The position of the first pattern that matches, each tried in turn.
    private static func firstInOrder(_ patterns: [String], _ text: String) -> Int? {
        var text = text
        return text.withUTF8 { bytes in patterns.firstIndex { Glob($0).matches(utf8: bytes) } }
    }

    private static func firstMatch(_ list: GlobList, _ text: String) -> Int? {
        var text = text
        return text.withUTF8 { list.firstMatch($0) }
    }

    /// Literals, wildcards, duplicates, and spellings that are one string to `==` but other
    /// bytes ("\u{212A}" KELVIN SIGN and "K"; a precomposed and a decomposed "é").
    static let pool = ["org.Kde.viewer", "org.\u{212A}de.viewer", "org.kde.viewer", "com.example.*", "*.archive",
                       "com.partner.app", "com.partner.*", "caf\u{E9}.app", "cafe\u{301}.app", "*", "a", "",
                       "org.bench.viewer7", "org.bench.viewer70", "*viewer*", "com.example.notes", "com.example.notes"]

    static let texts = pool.filter { !$0.contains("*") } + ["com.example.x", "x.archive", "org.kde.viewer.x", "ORG.KDE.VIEWER",
                                                            "com.partner.", "b", "org.bench.viewer", "\u{212A}"]

    /// Lists of every length from none to past the point where literals are hashed, each a
    /// different draw from the pool (the same each run), compared with trying each pattern for
    /// every text.
    @Test func firstMatchIsTheFirstPatternThatMatches() {
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        func draw() -> String {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Self.pool[Int(state >> 33) % Self.pool.count]
        }
        let lengths = Array(0...(GlobList.maxListedLiterals * 2 + 4))
        var checked = 0
        for length in lengths {
            for _ in 0..<40 {
                let patterns = (0..<length).map { _ in draw() }
                let list = GlobList(patterns)
                for text in Self.texts {
                    #expect(Self.firstMatch(list, text) == Self.firstInOrder(patterns, text), "\(patterns) / \(text)")
                    checked += 1
                }
            }
        }
        #expect(checked == lengths.count * 40 * Self.texts.count)
    }

    /// Both ways of finding a literal, on the lists the KELVIN SIGN tests use, and as many
    /// literals again as are compared one by one, so that they are hashed.
    @Test(arguments: [0, GlobList.maxListedLiterals])
    func literalsAreFoundByTheirBytes(padding: Int) {
        let patterns = ["org.\u{212A}de.viewer", "org.Kde.viewer"] + (0..<padding).map { "com.pad.app\($0)" }
        let list = GlobList(patterns)
        #expect(Self.firstMatch(list, "org.\u{212A}de.viewer") == 0)
        #expect(Self.firstMatch(list, "org.Kde.viewer") == 1)
        #expect(Self.firstMatch(list, "org.kde.viewer") == nil)
        #expect(Self.firstMatch(list, "com.pad.app0") == (padding > 0 ? 2 : nil))
    }
}
