extension AppTable {
    /// An id that fits a slot's inline key (at most 24 bytes, nearly every app id) as the words
    /// its lookup hashes and compares with the key, read once and kept in registers, with no
    /// loop: its first and last eight bytes, and from 17 bytes on the eight after the first
    /// (words overlap when the length is not a multiple of 8). An id under 8 bytes is one word,
    /// zero-padded like the inline key, and compared with it alone.
    struct ShortID {
        static let maxCount = AppTable.inlineKeyBytes

        let count: Int
        let first: UInt64
        let last: UInt64
        /// Where `last` sits in the inline key: at 8, past the id, for an id under 8 bytes,
        /// where the zero-padded key holds 0 as `last` does.
        let lastOffset: Int
        /// 0 for an id of up to 16 bytes (not compared then).
        let second: UInt64

        @inline(__always)
        init(_ bytes: UnsafeBufferPointer<UInt8>) {
            count = bytes.count
            guard count >= 8 else {
                first = Self.shortWord(bytes)
                (last, lastOffset, second) = (0, 8, 0)
                return
            }
            let raw = UnsafeRawPointer(bytes.baseAddress!)
            first = raw.loadUnaligned(as: UInt64.self)
            lastOffset = count &- 8
            last = raw.loadUnaligned(fromByteOffset: lastOffset, as: UInt64.self)
            second = count > 16 ? raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self) : 0
        }

        @inline(__always)
        var hash: UInt64 {
            var hash = Self.mix(Self.mix(Self.seed(count), first), last)
            if count > 16 { hash = Self.mix(hash, second) }
            return Self.finish(hash)
        }

        /// Whether this is the id whose zero-padded bytes are the inline key at `inlineKey`, the
        /// lengths being equal: each word against the key's at the same offset, no branch a word.
        @inline(__always)
        func matches(inlineKey: UnsafeRawPointer) -> Bool {
            func word(_ offset: Int) -> UInt64 { inlineKey.loadUnaligned(fromByteOffset: offset, as: UInt64.self) }
            var differences = (word(0) ^ first) | (word(lastOffset) ^ last)
            if count > 16 { differences |= word(8) ^ second }
            return differences == 0
        }

        /// The bytes of an id under 8 bytes as the word they make zero-padded (as the inline
        /// key holds them), read without a loop: two overlapping 4-byte loads, or the first,
        /// middle and last byte.
        @inline(__always)
        private static func shortWord(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
            let count = bytes.count
            guard let base = bytes.baseAddress, count > 0 else { return 0 }
            let littleEndian: UInt64
            if count >= 4 {
                let raw = UnsafeRawPointer(base)
                let low = UInt32(littleEndian: raw.loadUnaligned(as: UInt32.self))
                let high = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self))
                littleEndian = UInt64(low) | UInt64(high) << ((count - 4) * 8)
            } else {
                let middle = count / 2
                littleEndian = UInt64(base[0]) | UInt64(base[middle]) << (middle * 8) | UInt64(base[count - 1]) << ((count - 1) * 8)
            }
            return UInt64(littleEndian: littleEndian)
        }

        // The mixing steps of `AppTable.hash`, shared with `longHash`.
        @inline(__always)
        static func seed(_ count: Int) -> UInt64 { 0x9E37_79B9_7F4A_7C15 ^ UInt64(truncatingIfNeeded: count) }

        @inline(__always)
        static func mix(_ hash: UInt64, _ word: UInt64) -> UInt64 {
            let hash = (hash ^ word) &* 0xFF51_AFD7_ED55_8CCD
            return hash ^ hash >> 32
        }

        @inline(__always)
        static func finish(_ hash: UInt64) -> UInt64 {
            var hash = hash ^ hash >> 33
            hash = hash &* 0xC4CE_B9FE_1A85_EC53
            return hash ^ hash >> 33
        }
    }
}
