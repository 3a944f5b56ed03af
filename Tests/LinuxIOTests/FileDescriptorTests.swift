import Glibc
@testable import LinuxIO
import Testing

@Suite struct FileDescriptorTests {
    @Test func pipeCarriesBytesAndCarriesCloseOnExec() throws {
        let (reader, writer) = try FileDescriptor.pipe()
        defer { try? reader.close(); try? writer.close() }
        #expect(fcntl(reader.rawValue, F_GETFD) & FD_CLOEXEC != 0)
        #expect(fcntl(writer.rawValue, F_GETFD) & FD_CLOEXEC != 0)
        try writer.writeAll(Array("hello".utf8))
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
        #expect(Array(buffer[..<count]) == Array("hello".utf8))
    }

    @Test func nonBlockingReadOfAnEmptyPipeIsWouldBlock() throws {
        let (reader, writer) = try FileDescriptor.pipe()
        defer { try? reader.close(); try? writer.close() }
        #expect(try reader.isNonBlocking == false)
        try reader.setNonBlocking()
        #expect(try reader.isNonBlocking)
        var buffer = [UInt8](repeating: 0, count: 4)
        #expect(throws: Errno.wouldBlock) { _ = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) } }
        try reader.setNonBlocking(false)
        #expect(try reader.isNonBlocking == false)
    }

    /// The wait the Varlink client makes before each read: false when nothing came in time,
    /// true once bytes are there or the peer has closed (the read then says which), and
    /// `Syscall.milliseconds` rounds a timeout up so a short wait never becomes a busy one.
    @Test func waitUntilReadableTimesOutThenSeesDataAndEndOfFile() throws {
        let (first, second) = try UnixSocket.pair()
        defer { try? first.close() }
        #expect(try first.waitUntilReadable(timeout: .milliseconds(20)) == false)
        #expect(try first.waitUntilReadable(timeout: .zero) == false)
        _ = try [UInt8(7)].withUnsafeBytes { try second.send($0) }
        #expect(try first.waitUntilReadable(timeout: .seconds(5)))
        var byte: UInt8 = 0
        #expect(try withUnsafeMutableBytes(of: &byte) { try first.read(into: $0) } == 1)
        try second.close()
        #expect(try first.waitUntilReadable())
        #expect(try withUnsafeMutableBytes(of: &byte) { try first.read(into: $0) } == 0)
        #expect(Syscall.milliseconds(.microseconds(1)) == 1)
        #expect(Syscall.milliseconds(.milliseconds(1_500)) == 1_500)
        #expect(Syscall.milliseconds(.seconds(Int64.max)) == CInt.max)
        #expect(Syscall.milliseconds(.milliseconds(-500)) == 0)
    }

    @Test func sendToAClosedPeerIsBrokenPipeNotSIGPIPE() throws {
        let (first, second) = try UnixSocket.pair()
        try second.close()
        defer { try? first.close() }
        #expect(throws: Errno.brokenPipe) { _ = try [UInt8(1)].withUnsafeBytes { try first.send($0) } }
    }

    @Test func closingTwiceReportsBadFileDescriptor() throws {
        let (reader, writer) = try FileDescriptor.pipe()
        try writer.close()
        try reader.close()
        #expect(throws: Errno.badFileDescriptor) { try reader.close() }
    }

    @Test func errnoDescriptionsReadWell() {
        #expect(Errno.addressInUse.description == "Address already in use (EADDRINUSE)")
        #expect(Errno.brokenPipe.description == "Broken pipe (EPIPE)")
        #expect(Errno(rawValue: EXDEV).description.hasSuffix("(errno \(EXDEV))"))
        #expect(Errno.wouldBlock == Errno(rawValue: EWOULDBLOCK))
    }

    @Test func interruptedCallsAreRetriedAndOtherFailuresThrown() throws {
        var calls = 0
        let result = try retryingOnInterrupt { () -> Int32 in
            calls += 1
            if calls < 3 { errno = EINTR; return -1 }
            return 42
        }
        #expect(result == 42)
        #expect(calls == 3)
        calls = 0
        #expect(throws: Errno.connectionReset) {
            _ = try retryingOnInterrupt { () -> Int32 in
                calls += 1
                errno = ECONNRESET
                return -1
            }
        }
        #expect(calls == 1)
    }
}
