/// Lexical resolution of absolute paths, done without allocating on the heap.
///
/// Empty segments (`//`, a trailing `/`) and `.` are dropped; `..` removes the segment before
/// it, and at the root it stays at the root (`/..` is `/`), as the kernel resolves it. Links
/// are not followed: whoever asks resolves symbolic links first (the SDK uses `realpath`).
///
/// The resolved form of a path is its segments, each after a slash (`/a/c`), and empty for
/// the root: the form `PathGlob` matches.
enum LexicalPath {
    private static let slash = UInt8(ascii: "/")
    private static let dot = UInt8(ascii: ".")

    /// Calls `body` with the resolved form of `bytes`; nil when `bytes` is not an absolute
    /// path. A path with nothing to resolve (no empty segment, none that starts with a dot, no
    /// trailing slash), as a caller's almost always is, is passed as it is, after one pass
    /// over its bytes; any other is resolved into a buffer on the stack.
    static func withResolved<Result>(_ bytes: UnsafeBufferPointer<UInt8>,
                                     _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result? {
        guard bytes.first == slash else { return nil }
        guard needsResolving(bytes) else { return body(bytes) }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bytes.count) { out in
            body(UnsafeBufferPointer(rebasing: out[..<resolve(bytes, into: out)]))
        }
    }

    /// The resolved form of an absolute path as text (`/a/./b/../c/` → `/a/c`, `/` for the
    /// root); nil when `path` is not absolute.
    static func resolve(_ path: String) -> String? {
        var path = path
        return path.withUTF8 { bytes in
            withResolved(bytes) { $0.isEmpty ? "/" : String(decoding: $0, as: UTF8.self) }
        }
    }

    /// Whether the absolute `bytes` differ from their resolved form: a slash followed by a
    /// slash or a dot (`.`, `..`, and names that merely start with a dot, which are resolved
    /// to themselves), or a trailing slash.
    /// Read eight bytes at a time, as a byte loop costs ≈ 6 instructions a byte.
    private static func needsResolving(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        /// The high bit of each byte of `word` that is zero.
        func zeroBytes(_ word: UInt64) -> UInt64 {
            let low7: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
            return ~(((word & low7) &+ low7) | word | low7)
        }
        let raw = UnsafeRawPointer(bytes.baseAddress!)
        // The high bit of byte 0 when the byte before the word is a slash.
        var afterSlash: UInt64 = 0
        var offset = 0
        while offset + 8 <= bytes.count {
            let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            let slashes = zeroBytes(word ^ 0x2F2F_2F2F_2F2F_2F2F)
            let slashesOrDots = slashes | zeroBytes(word ^ 0x2E2E_2E2E_2E2E_2E2E)
            // Each slash's bit moved to the byte after it, meeting a slash or a dot there.
            if (slashes << 8 | afterSlash) & slashesOrDots != 0 { return true }
            afterSlash = slashes >> 56
            offset += 8
        }
        var previousIsSlash = afterSlash != 0
        for byte in UnsafeBufferPointer(rebasing: bytes[offset...]) {
            if previousIsSlash && (byte == slash || byte == dot) { return true }
            previousIsSlash = byte == slash
        }
        return previousIsSlash
    }

    /// Writes the resolved form of the absolute `bytes` into `out` (which has room for
    /// `bytes.count`: resolving never lengthens a path) and returns its length.
    private static func resolve(_ bytes: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        var count = 0
        var start = 1
        while start <= bytes.count {
            var end = start
            while end < bytes.count && bytes[end] != slash { end += 1 }
            let length = end - start
            if length == 0 || (length == 1 && bytes[start] == dot) {
                // empty or `.`: nothing to keep
            } else if length == 2 && bytes[start] == dot && bytes[start + 1] == dot {
                // `..`: back to the slash of the last segment kept, if any
                while count > 0 {
                    count -= 1
                    if out[count] == slash { break }
                }
            } else {
                out[count] = slash
                (out.baseAddress! + count + 1).initialize(from: bytes.baseAddress! + start, count: length)
                count += 1 + length
            }
            start = end + 1
        }
        return count
    }
}
