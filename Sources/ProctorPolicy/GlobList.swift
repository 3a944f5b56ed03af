/// An ordered list of app-id globs (`dlp.share.exempt`) compiled for lookup: patterns
/// without `*` go into a hash table, the others are tried in order, so a lookup costs one
/// hash probe plus one linear match per wildcard pattern.
struct GlobList: Sendable {
    /// The patterns as written, in order.
    let patterns: [String]
    /// Literal pattern → its first position in `patterns`.
    private let literals: [String: Int]
    /// Wildcard patterns with their positions, in order.
    private let wildcards: [(glob: Glob, index: Int)]

    init(_ patterns: [String]) {
        self.patterns = patterns
        var literals: [String: Int] = [:]
        var wildcards: [(glob: Glob, index: Int)] = []
        for (index, pattern) in patterns.enumerated() {
            let glob = Glob(pattern)
            if glob.isLiteral {
                if literals[pattern] == nil { literals[pattern] = index }
            } else {
                wildcards.append((glob, index))
            }
        }
        self.literals = literals
        self.wildcards = wildcards
    }

    var isEmpty: Bool { patterns.isEmpty }

    /// The position of the first pattern that matches `text`, or nil.
    func firstMatch(_ text: String) -> Int? {
        guard !patterns.isEmpty else { return nil }
        // The table finds a key by canonical equivalence ("\u{212A}" KELVIN SIGN equals "K"): the
        // pattern it finds must have the same bytes.
        var best = literals[text].flatMap { patterns[$0].hasSameBytes(as: text) ? $0 : nil }
        var text = text
        text.withUTF8 { bytes in
            for wildcard in wildcards {
                if let found = best, found < wildcard.index { break }
                if wildcard.glob.matches(utf8: bytes) { best = wildcard.index; break }
            }
        }
        return best
    }
}
