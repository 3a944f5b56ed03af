/// An ordered list of app-id globs (`dlp.share.exempt`) compiled for lookup: patterns
/// without `*` go into a hash table, the others are tried in order, so a lookup costs one
/// hash probe plus one linear match per wildcard pattern.
struct GlobList: Sendable {
    /// The patterns as written, in order.
    let patterns: [String]
    /// Literal patterns by the hash of their UTF-8 bytes → their positions, in order. By bytes,
    /// not a `[String: …]` table, which finds canonically equivalent spellings ("\u{212A}"
    /// KELVIN SIGN and "K") as one key; and a lookup needs no `String` of the text.
    private let literals: [Int: [Int]]
    /// Wildcard patterns with their positions, in order.
    private let wildcards: [(glob: Glob, index: Int)]

    init(_ patterns: [String]) {
        self.patterns = patterns
        var literals: [Int: [Int]] = [:]
        var wildcards: [(glob: Glob, index: Int)] = []
        for (index, pattern) in patterns.enumerated() {
            let glob = Glob(pattern)
            if glob.isLiteral {
                literals[AppTable.withBytes(of: pattern, Self.hash), default: []].append(index)
            } else {
                wildcards.append((glob, index))
            }
        }
        self.literals = literals
        self.wildcards = wildcards
    }

    var isEmpty: Bool { patterns.isEmpty }

    /// The position of the first pattern that matches `text`, given as its UTF-8 bytes, or nil.
    func firstMatch(_ text: UnsafeBufferPointer<UInt8>) -> Int? {
        guard !patterns.isEmpty else { return nil }
        var best = literals[Self.hash(text)]?.first { text.isUTF8(of: patterns[$0]) }
        for wildcard in wildcards {
            if let found = best, found < wildcard.index { break }
            if wildcard.glob.matches(utf8: text) { best = wildcard.index; break }
        }
        return best
    }

    /// Seeded per process (`Hasher`): the text is an app's to choose.
    private static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var hasher = Hasher()
        hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        return hasher.finalize()
    }
}
