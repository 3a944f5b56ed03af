/// Why `FileDescriptor.readAll(limit:sizeHint:)` returned no bytes.
public enum ReadAllError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `read(2)` failed.
    case read(Errno)
    /// The file holds more than `limit` bytes: `limit + 1` of them were read, and no more.
    case limitExceeded(limit: Int)

    public var description: String {
        switch self {
        case .read(let errno): "\(errno)"
        case .limitExceeded(let limit): "more than \(limit) bytes"
        }
    }
}

extension FileDescriptor {
    /// Reads until `buffer` is full or the file ends; returns how many bytes were read, fewer
    /// than `buffer.count` only at the end of the file. Short reads (a pipe, a FIFO, a signal)
    /// are read on from where they stopped.
    public func read(filling buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        var filled = 0
        while filled < buffer.count {
            let count = try read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
            if count == 0 { break }
            filled += count
        }
        return filled
    }

    /// All the bytes left to read, if there are at most `limit` of them; a larger or endless
    /// file (a FIFO, `/dev/zero`) is refused after reading `limit + 1` bytes, so it never costs
    /// more memory than that.
    ///
    /// The bytes go into one buffer of `min(limit, sizeHint ?? 64 KiB) + 1` bytes — the extra
    /// byte sees the end of the file without a second buffer — grown as it fills. On failure
    /// what was read is zeroed before the buffer is freed, so a refused secret (a key file)
    /// does not linger in freed memory; the returned array is the only copy of what it holds
    /// while the buffer need not grow.
    public func readAll(limit: Int, sizeHint: Int? = nil) throws(ReadAllError) -> [UInt8] {
        precondition(limit >= 0 && limit < Int.max, "readAll needs a limit from 0 to Int.max - 1 bytes")
        var bytes = [UInt8](repeating: 0, count: min(limit, max(sizeHint ?? 64 * 1024, 0)) + 1)
        var count = 0
        while true {
            let filled = bytes.count
            let read = bytes.withUnsafeMutableBytes { raw in
                Result { () throws(Errno) in try self.read(filling: UnsafeMutableRawBufferPointer(rebasing: raw[count...])) }
            }
            do { count += try read.get() } catch {
                Self.zero(&bytes)
                throw .read(error)
            }
            if count < filled { break }
            guard count <= limit else {
                Self.zero(&bytes)
                throw .limitExceeded(limit: limit)
            }
            bytes += repeatElement(0, count: min(filled, limit - filled + 1))  // doubling, up to limit + 1
        }
        bytes.removeSubrange(count...)
        return bytes
    }

    private static func zero(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }
    }
}
