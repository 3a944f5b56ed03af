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
            return mine.utf8.elementsEqual(theirs.utf8)
        case (.array(let mine), .array(let theirs)):
            return mine.count == theirs.count && zip(mine, theirs).allSatisfy { $0.hasSameBytes(as: $1) }
        case (.object(let mine), .object(let theirs)):
            // A dictionary finds a key by canonical equivalence (and holds no two equivalent
            // ones): the member it finds must also be spelt with the same bytes.
            return mine.count == theirs.count && mine.allSatisfy { key, value in
                guard let index = theirs.index(forKey: key), theirs[index].key.utf8.elementsEqual(key.utf8) else { return false }
                return value.hasSameBytes(as: theirs[index].value)
            }
        default:
            return self == other
        }
    }
}
