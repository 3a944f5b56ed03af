/// An ordered list of app-id globs (`dlp.share.exempt`) compiled for lookup: patterns
/// without `*` are compared by their bytes (a few one by one, many through a hash table),
/// the others are tried in order.
struct GlobList: Sendable {
    /// The patterns as written, in order.
    let patterns: [String]
    /// The literal patterns, found by their UTF-8 bytes: not `String`'s `==` nor a `[String: …]`
    /// table, which find canonically equivalent spellings ("\u{212A}" KELVIN SIGN and "K") equal;
    /// and a check needs no `String` of the text.
    private let literals: Literals
    /// Wildcard patterns with their positions, in order.
    private let wildcards: [(glob: Glob, index: Int)]

    private enum Literals: Sendable {
        /// Their positions, in order, each compared by length then bytes: a handful costs less
        /// than the seeded hash (`Hasher`, SipHash) that a table needs.
        case listed([Int])
        /// Their positions by the hash of their bytes, in order.
        case hashed([Int: [Int]])
    }

    /// Lists with more literals than this look them up by their hash.
    static let maxListedLiterals = 8

    init(_ patterns: [String]) {
        self.patterns = patterns
        var literals: [Int] = []
        var wildcards: [(glob: Glob, index: Int)] = []
        for (index, pattern) in patterns.enumerated() {
            let glob = Glob(pattern)
            if glob.isLiteral { literals.append(index) } else { wildcards.append((glob, index)) }
        }
        if literals.count <= Self.maxListedLiterals {
            self.literals = .listed(literals)
        } else {
            var hashed: [Int: [Int]] = [:]
            for index in literals { hashed[AppTable.withBytes(of: patterns[index], Self.hash), default: []].append(index) }
            self.literals = .hashed(hashed)
        }
        self.wildcards = wildcards
    }

    var isEmpty: Bool { patterns.isEmpty }

    /// The position of the first pattern that matches `text`, given as its UTF-8 bytes, or nil.
    func firstMatch(_ text: UnsafeBufferPointer<UInt8>) -> Int? {
        guard !patterns.isEmpty else { return nil }
        let candidates: [Int]? = switch literals {
        case .listed(let listed): listed
        case .hashed(let hashed): hashed[Self.hash(text)]
        }
        var best = candidates?.first { text.isUTF8(of: patterns[$0]) }
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
