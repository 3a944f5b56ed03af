/// One segment of a path: the byte range between two slashes.
struct PathSegment {
    var start: Int32
    var end: Int32
}

/// Lexical resolution of absolute paths, done in place without allocating on the heap.
///
/// Empty segments (`//`, a trailing `/`) and `.` are dropped; `..` removes the segment before
/// it, and at the root it stays at the root (`/..` is `/`), as the kernel resolves it. Links
/// are not followed: whoever asks resolves symbolic links first (the SDK uses `realpath`).
enum LexicalPath {
    /// Calls `body` with `bytes` and the ranges of its resolved segments; nil when `bytes`
    /// is not an absolute path. `bytes` must be shorter than `Int32.max`.
    static func withSegments<Result>(
        of bytes: UnsafeBufferPointer<UInt8>,
        _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<PathSegment>) -> Result
    ) -> Result? {
        let slash = UInt8(ascii: "/")
        guard bytes.first == slash else { return nil }
        var slashes = 0
        for byte in bytes where byte == slash { slashes += 1 }
        return withUnsafeTemporaryAllocation(of: PathSegment.self, capacity: slashes) { storage in
            var count = 0
            var start = 1
            while start <= bytes.count {
                var end = start
                while end < bytes.count && bytes[end] != slash { end += 1 }
                let length = end - start
                if length == 0 || (length == 1 && bytes[start] == UInt8(ascii: ".")) {
                    // empty or `.`: nothing to keep
                } else if length == 2 && bytes[start] == UInt8(ascii: ".") && bytes[start + 1] == UInt8(ascii: ".") {
                    if count > 0 { count -= 1 }
                } else {
                    storage[count] = PathSegment(start: Int32(start), end: Int32(end))
                    count += 1
                }
                start = end + 1
            }
            return body(bytes, UnsafeBufferPointer(rebasing: storage[0..<count]))
        }
    }

    /// The resolved form of an absolute path as text (`/a/./b/../c/` → `/a/c`); nil when
    /// `path` is not absolute.
    static func resolve(_ path: String) -> String? {
        var path = path
        return path.withUTF8 { bytes in
            withSegments(of: bytes) { bytes, segments in
                if segments.isEmpty { return "/" }
                var out: [UInt8] = []
                for segment in segments {
                    out.append(UInt8(ascii: "/"))
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[Int(segment.start)..<Int(segment.end)]))
                }
                return String(decoding: out, as: UTF8.self)
            }
        }
    }
}
