import Glibc

extension String {
    /// Whether this string is spelt with the same UTF-8 bytes as `other`.
    ///
    /// `==` compares strings as Swift does, by canonical equivalence: "café" with a composed é
    /// equals "café" with a decomposed one, and "\u{212A}" (KELVIN SIGN) equals "K". Use this
    /// where the bytes are what counts: a path or a name the kernel, a file system or the store
    /// sees, a text that is serialised. It runs on `Decide`'s path, so it compares the lengths,
    /// which a native string stores, then the bytes with one `memcmp`, rather than byte by byte
    /// through `elementsEqual` (≈ 150 instructions for an app id).
    public func hasSameBytes(as other: String) -> Bool {
        let (mine, theirs) = (utf8, other.utf8)
        guard mine.count == theirs.count else { return false }
        let compared = mine.withContiguousStorageIfAvailable { left in
            theirs.withContiguousStorageIfAvailable { right in
                left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0
            }
        }
        return (compared ?? nil) ?? mine.elementsEqual(theirs)
    }
}

/// A string as a set or dictionary key that matches only the same bytes (`hasSameBytes(as:)`),
/// where `String` as a key would take canonically equivalent spellings for one.
public struct ByteExactString: Hashable, Sendable {
    public let text: String

    public init(_ text: String) { self.text = text }

    public static func == (left: Self, right: Self) -> Bool { left.text.hasSameBytes(as: right.text) }

    /// `String`'s hash: the same bytes are an equal string, so equal keys hash alike.
    public func hash(into hasher: inout Hasher) { hasher.combine(text) }
}

extension JSONValue {
    /// Whether this value equals `other` with the same bytes in every string and member name.
    ///
    /// `==` compares strings as Swift does, by canonical equivalence: "café" with a composed é
    /// equals "café" with a decomposed one, yet they serialise to other bytes, and a path or a
    /// config value reaches the kernel or an app as the bytes it was written with. Use this
    /// where "the same" must mean "serialises to the same bytes".
    public func hasSameBytes(as other: JSONValue) -> Bool {
        switch (self, other) {
        case (.string(let mine), .string(let theirs)):
            return mine.hasSameBytes(as: theirs)
        case (.array(let mine), .array(let theirs)):
            return mine.count == theirs.count && zip(mine, theirs).allSatisfy { $0.hasSameBytes(as: $1) }
        case (.object(let mine), .object(let theirs)):
            // A dictionary finds a key by canonical equivalence (and holds no two equivalent
            // ones): the member it finds must also be spelt with the same bytes.
            return mine.count == theirs.count && mine.allSatisfy { key, value in
                guard let index = theirs.index(forKey: key), theirs[index].key.hasSameBytes(as: key) else { return false }
                return value.hasSameBytes(as: theirs[index].value)
            }
        default:
            return self == other
        }
    }
}
