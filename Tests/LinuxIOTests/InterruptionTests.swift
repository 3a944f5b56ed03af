import Foundation
import Glibc
import LinuxIO
import Synchronization
import Testing

private let interruptions = Atomic<Int>(0)

@Suite struct InterruptionTests {
    /// A real EINTR: a signal handler installed without SA_RESTART interrupts a blocking read;
    /// `FileDescriptor.read` must retry it and return the data written afterwards.
    @Test func aBlockingReadInterruptedByASignalIsRetried() throws {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in interruptions.add(1, ordering: .relaxed) }
        action.sa_flags = 0  // no SA_RESTART: the kernel returns EINTR from read
        sigemptyset(&action.sa_mask)
        #expect(sigaction(SIGUSR1, &action, nil) == 0)

        let (reader, writer) = try FileDescriptor.pipe()
        defer { try? reader.close(); try? writer.close() }
        let readerThread = Shared<pthread_t?>(nil)
        let result = Shared<Result<[UInt8], Errno>?>(nil)
        Thread.detachNewThread {
            // Threads start with the creator's mask, and the test runner's threads block SIGUSR1.
            var unblock = sigset_t()
            sigemptyset(&unblock)
            sigaddset(&unblock, SIGUSR1)
            pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
            readerThread.update { $0 = pthread_self() }
            var buffer = [UInt8](repeating: 0, count: 16)
            let outcome = Result { () throws(Errno) -> [UInt8] in
                let count = try buffer.withUnsafeMutableBytes { raw in
                    Result { () throws(Errno) in try reader.read(into: raw) }
                }.get()
                return Array(buffer[..<count])
            }
            result.update { $0 = outcome }
        }
        #expect(eventually { readerThread.value != nil })
        let before = interruptions.load(ordering: .relaxed)
        // Interrupt until the handler has run while the reader sits in read(2).
        usleep(50_000)
        pthread_kill(readerThread.value!, SIGUSR1)
        #expect(eventually { interruptions.load(ordering: .relaxed) > before })
        usleep(20_000)
        #expect(result.value == nil, "the interrupted read must still be waiting")
        try writer.writeAll(Array("after".utf8))
        #expect(eventually { result.value != nil })
        #expect(result.value == .success(Array("after".utf8)))
    }
}
