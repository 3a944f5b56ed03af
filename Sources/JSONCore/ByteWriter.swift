/// Copies parts into a buffer sized beforehand: text assembled from a few pieces whose
/// lengths are known is made with one allocation, or none (a rule's text, a `Decide` reply,
/// a log line's message). Inlined, so each part is one copy; a part that does not fit traps.
public struct ByteWriter {
    @usableFromInline let buffer: UnsafeMutableRawBufferPointer
    @usableFromInline var written = 0

    @inlinable
    public init(buffer: UnsafeMutableRawBufferPointer) { self.buffer = buffer }

    /// The bytes written so far, from the start of the buffer.
    @inlinable
    public var count: Int { written }

    @inlinable @inline(__always)
    public mutating func write(_ text: StaticString) {
        write(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `text`'s UTF-8 bytes: in place for a native string, else through a contiguous copy.
    @inlinable @inline(__always)
    public mutating func write(_ text: String) {
        if text.utf8.withContiguousStorageIfAvailable({ write(UnsafeRawBufferPointer($0)) }) == nil { writeCopying(text) }
    }

    /// The rare case of `write(_:)`, kept out of line so each writer does not inline it.
    @usableFromInline
    mutating func writeCopying(_ text: String) {
        var contiguous = text
        contiguous.withUTF8 { write(UnsafeRawBufferPointer($0)) }
    }

    @inlinable @inline(__always)
    public mutating func write(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        precondition(bytes.count <= buffer.count - written, "ByteWriter: more bytes than the buffer was sized for")
        (buffer.baseAddress! + written).copyMemory(from: source, byteCount: bytes.count)
        written += bytes.count
    }
}
