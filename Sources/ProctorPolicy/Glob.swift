/// A glob over a whole string where `*` stands for any run of characters (including none
/// and including dots) and every other character stands for itself: `com.example.*`.
///
/// Compiled once into the literal pieces between the stars; matching anchors the first
/// piece at the start and the last at the end and finds the others leftmost in between,
/// which is exact for this one-wildcard language and runs in time linear in the pattern
/// times the text, without allocating.
public struct Glob: Sendable, Hashable, CustomStringConvertible {
    public let pattern: String
    /// The UTF-8 pieces between stars; one piece means the pattern has no star.
    private let pieces: [[UInt8]]

    public init(_ pattern: String) {
        self.pattern = pattern
        pieces = pattern.utf8.split(separator: UInt8(ascii: "*"), omittingEmptySubsequences: false).map(Array.init)
    }

    /// True when the pattern has no `*` and so matches only itself.
    public var isLiteral: Bool { pieces.count == 1 }

    public var description: String { pattern }

    /// Whether the whole of `text` matches.
    public func matches(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { matches(utf8: $0) }
    }

    /// Whether the whole of `bytes` matches.
    func matches(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let first = pieces[0]
        if pieces.count == 1 { return bytes.count == first.count && Self.has(first, in: bytes, at: 0) }
        let last = pieces[pieces.count - 1]
        guard bytes.count >= first.count + last.count,
              Self.has(first, in: bytes, at: 0),
              Self.has(last, in: bytes, at: bytes.count - last.count) else { return false }
        var position = first.count
        let end = bytes.count - last.count
        for index in 1..<(pieces.count - 1) {
            guard let found = Self.find(pieces[index], in: bytes, from: position, to: end) else { return false }
            position = found + pieces[index].count
        }
        return true
    }

    /// Whether `piece` sits at `start` in `bytes`.
    private static func has(_ piece: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> Bool {
        guard start >= 0, start + piece.count <= bytes.count else { return false }
        for offset in 0..<piece.count where bytes[start + offset] != piece[offset] { return false }
        return true
    }

    private static func find(_ piece: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> Int? {
        guard end - start >= piece.count else { return nil }
        var candidate = start
        while candidate + piece.count <= end {
            var offset = 0
            while offset < piece.count && bytes[candidate + offset] == piece[offset] { offset += 1 }
            if offset == piece.count { return candidate }
            candidate += 1
        }
        return nil
    }
}
