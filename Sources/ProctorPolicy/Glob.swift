/// A glob over a whole string where `*` stands for any run of characters (including none
/// and including dots) and every other character stands for itself: `com.example.*`.
///
/// Matching reads the pattern's bytes in place (pieces between stars found on the fly): the
/// first piece is anchored at the start, the last at the end, the others found leftmost in
/// between, which is exact for this one-wildcard language and runs in time linear in the
/// pattern times the text, without allocating. Keeping the pattern in one buffer means a
/// cold match costs one cache miss, not one per piece.
public struct Glob: Sendable, Hashable, CustomStringConvertible {
    public let pattern: String
    /// The pattern's UTF-8 bytes.
    private let bytes: [UInt8]

    public init(_ pattern: String) {
        self.pattern = pattern
        bytes = Array(pattern.utf8)
    }

    /// True when the pattern has no `*` and so matches only itself.
    public var isLiteral: Bool { !bytes.contains(Self.star) }

    public var description: String { pattern }

    /// Whether the whole of `text` matches.
    public func matches(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { matches(utf8: $0) }
    }

    /// Whether the whole of `bytes` matches.
    func matches(utf8 text: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.withUnsafeBufferPointer { Self.matches(pattern: $0, text: text) }
    }

    private static let star = UInt8(ascii: "*")

    /// Whether the whole of `text` matches the glob `pattern` (UTF-8, `*` the only wildcard).
    static func matches(pattern: UnsafeBufferPointer<UInt8>, text: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let firstStar = pattern.firstIndex(of: star) else {
            return pattern.count == text.count && has(pattern, 0..<pattern.count, in: text, at: 0)
        }
        let lastStar = pattern.lastIndex(of: star)!
        let lastCount = pattern.count - lastStar - 1
        guard text.count >= firstStar + lastCount,
              has(pattern, 0..<firstStar, in: text, at: 0),
              has(pattern, (lastStar + 1)..<pattern.count, in: text, at: text.count - lastCount) else { return false }
        var position = firstStar
        let end = text.count - lastCount
        var pieceStart = firstStar + 1
        while pieceStart <= lastStar {
            var pieceEnd = pieceStart
            while pattern[pieceEnd] != star { pieceEnd += 1 }
            guard let found = find(pattern, pieceStart..<pieceEnd, in: text, from: position, to: end) else { return false }
            position = found + pieceEnd - pieceStart
            pieceStart = pieceEnd + 1
        }
        return true
    }

    /// Whether `pattern[piece]` sits at `start` in `text`.
    private static func has(_ pattern: UnsafeBufferPointer<UInt8>, _ piece: Range<Int>, in text: UnsafeBufferPointer<UInt8>,
                            at start: Int) -> Bool {
        guard start >= 0, start + piece.count <= text.count else { return false }
        for offset in 0..<piece.count where text[start + offset] != pattern[piece.lowerBound + offset] { return false }
        return true
    }

    /// The leftmost position of `pattern[piece]` in `text[start..<end]`.
    private static func find(_ pattern: UnsafeBufferPointer<UInt8>, _ piece: Range<Int>, in text: UnsafeBufferPointer<UInt8>,
                             from start: Int, to end: Int) -> Int? {
        var candidate = start
        while candidate + piece.count <= end {
            var offset = 0
            while offset < piece.count && text[candidate + offset] == pattern[piece.lowerBound + offset] { offset += 1 }
            if offset == piece.count { return candidate }
            candidate += 1
        }
        return nil
    }
}
