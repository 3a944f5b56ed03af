/// Finds the word an administrator most likely meant, for "did you mean" hints on unknown
/// keys, options and verbs.
public enum SpellingSuggestion {
    /// The candidate closest to `word` by edit distance (insertions, deletions,
    /// substitutions and swaps of neighbours; case is ignored), if it is close enough to be
    /// a plausible typo: at most one edit per three characters, and at least one allowed.
    public static func closest(to word: String, in candidates: some Sequence<String>) -> String? {
        let typed = Array(word.lowercased().unicodeScalars)
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let target = Array(candidate.lowercased().unicodeScalars)
            let allowed = max(1, target.count / 3)
            guard abs(target.count - typed.count) <= allowed else { continue }
            let distance = editDistance(typed, target)
            if distance <= allowed, distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        return best?.candidate
    }

    /// Optimal-string-alignment distance: Levenshtein plus transposition of neighbours,
    /// the commonest typo.
    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previousPrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    value = min(value, previousPrevious[j - 2] + 1)
                }
                current[j] = value
            }
            (previousPrevious, previous, current) = (previous, current, previousPrevious)
        }
        return previous[b.count]
    }
}
