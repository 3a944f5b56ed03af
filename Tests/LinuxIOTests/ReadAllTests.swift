import Foundation
import Glibc
import LinuxIO
import Testing
import TestSupport

/// `FileDescriptor.readAll(limit:sizeHint:)` and `read(filling:)`, the one bounded read loop of
/// the small files proctord and the SDK read (policy files, the policy snapshot, key files,
/// protected files' chunks).
@Suite struct ReadAllTests {
    @Test func aFileOfExactlyTheLimitIsReadWhole() throws {
        let contents = (0..<4096).map { UInt8(truncatingIfNeeded: $0) }
        #expect(try readAll(ofFileHolding: contents, limit: 4096) == contents)
    }

    @Test func aFileOneByteOverTheLimitIsRefused() throws {
        #expect(throws: ReadAllError.limitExceeded(limit: 4096)) {
            try readAll(ofFileHolding: [UInt8](repeating: 7, count: 4097), limit: 4096)
        }
        #expect("\(ReadAllError.limitExceeded(limit: 4096))" == "more than 4096 bytes")
    }

    @Test func anEmptyFileIsNoBytesEvenWithALimitOfZero() throws {
        #expect(try readAll(ofFileHolding: [], limit: 0) == [])
        #expect(throws: ReadAllError.limitExceeded(limit: 0)) { try readAll(ofFileHolding: [1], limit: 0) }
    }

    /// The buffer starts at the hint (or 64 KiB) and grows: a hint too small, too large or
    /// absent changes nothing but the number of reads.
    @Test(arguments: [nil, 0, 1, 100_000, 150_000, 1 << 30] as [Int?])
    func theSizeHintOnlySizesTheFirstBuffer(sizeHint: Int?) throws {
        let contents = (0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        #expect(try readAll(ofFileHolding: contents, limit: 150_000, sizeHint: sizeHint) == contents)
        #expect(throws: ReadAllError.limitExceeded(limit: 150_000)) {
            try readAll(ofFileHolding: contents + [0], limit: 150_000, sizeHint: sizeHint)
        }
    }

    /// A FIFO's bytes come in short reads as the writer writes them; all are read, to its end.
    @Test func aFIFOIsReadOverShortReadsToItsEnd() throws {
        let directory = try TemporaryDirectory()
        let path = directory.appending("fifo").path
        #expect(mkfifo(path, 0o600) == 0)
        let pieces = (0..<20).map { [UInt8](repeating: UInt8($0), count: 1000 + $0) }
        Thread.detachNewThread {
            guard let writer = try? FileDescriptor.open(path, O_WRONLY) else { return }
            for piece in pieces {
                try? writer.writeAll(piece)
                usleep(1000)
            }
            try? writer.close()
        }
        let reader = try FileDescriptor.open(path, O_RDONLY)
        defer { try? reader.close() }
        #expect(try reader.readAll(limit: 100_000, sizeHint: 10) == Array(pieces.joined()))
    }

    /// An endless file costs `limit + 1` bytes, then is refused.
    @Test func anEndlessFileIsRefusedAtTheLimit() throws {
        let zero = try FileDescriptor.open("/dev/zero", O_RDONLY)
        defer { try? zero.close() }
        #expect(throws: ReadAllError.limitExceeded(limit: 1 << 20)) { try zero.readAll(limit: 1 << 20) }
    }

    @Test func aReadErrorIsThrownAsItsErrno() throws {
        let (reader, writer) = try FileDescriptor.pipe()
        defer { try? reader.close(); try? writer.close() }
        #expect(throws: ReadAllError.read(.badFileDescriptor)) { try writer.readAll(limit: 16) }
        try reader.setNonBlocking()
        #expect(throws: ReadAllError.read(.wouldBlock)) { try reader.readAll(limit: 16) }
        #expect("\(ReadAllError.read(.wouldBlock))" == "\(Errno.wouldBlock)")
    }

    /// `read(filling:)` stops short only at the end of the file, whatever the pipe hands it.
    @Test func readFillingReadsOnUntilTheBufferIsFullOrTheEnd() throws {
        let (reader, writer) = try FileDescriptor.pipe()
        defer { try? reader.close() }
        try writer.writeAll(Array("abc".utf8))
        Thread.detachNewThread {
            usleep(10_000)
            try? writer.writeAll(Array("defgh".utf8))
            try? writer.close()
        }
        var buffer = [UInt8](repeating: 0, count: 6)
        #expect(try buffer.withUnsafeMutableBytes { try reader.read(filling: $0) } == 6)
        #expect(buffer == Array("abcdef".utf8))
        #expect(try buffer.withUnsafeMutableBytes { try reader.read(filling: $0) } == 2)
        #expect(buffer[..<2] == ArraySlice("gh".utf8))
    }

    /// `readAll(limit:sizeHint:)` of a temporary file holding `contents`.
    private func readAll(ofFileHolding contents: [UInt8], limit: Int, sizeHint: Int? = nil) throws -> [UInt8] {
        let directory = try TemporaryDirectory()
        let path = directory.appending("file").path
        let writer = try FileDescriptor.open(path, O_WRONLY | O_CREAT | O_EXCL, mode: 0o600)
        try writer.writeAll(contents)
        try writer.close()
        let reader = try FileDescriptor.open(path, O_RDONLY)
        defer { try? reader.close(); directory.remove() }
        return try reader.readAll(limit: limit, sizeHint: sizeHint)
    }
}
