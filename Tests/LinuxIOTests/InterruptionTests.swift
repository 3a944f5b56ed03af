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
        let (reader, writer) = try FileDescriptor.pipe()
        defer { try? reader.close(); try? writer.close() }
        let result = try interruptWhileBlocked({
            var buffer = [UInt8](repeating: 0, count: 16)
            return Result { () throws(Errno) -> [UInt8] in
                let count = try buffer.withUnsafeMutableBytes { raw in
                    Result { () throws(Errno) in try reader.read(into: raw) }
                }.get()
                return Array(buffer[..<count])
            }
        }, thenRun: { try writer.writeAll(Array("after".utf8)) })
        #expect(result == .success(Array("after".utf8)))
    }

    /// `readAll` blocked in read(2) on a pipe goes on reading after the signal, to the end.
    @Test func readAllInterruptedByASignalReadsToTheEnd() throws {
        let (reader, writer) = try FileDescriptor.pipe()
        defer { try? reader.close() }
        try writer.writeAll(Array("before ".utf8))
        let result = try interruptWhileBlocked({
            Result { () throws(ReadAllError) in try reader.readAll(limit: 64) }
        }, thenRun: {
            try writer.writeAll(Array("after".utf8))
            try writer.close()
        })
        #expect(result == .success(Array("before after".utf8)))
    }

    /// Runs `body` on a thread that takes SIGUSR1 through a handler installed without
    /// SA_RESTART (so the kernel returns EINTR from a blocking call), sends it the signal while
    /// `body` blocks, checks `body` still waits, then runs `unblock` and returns what `body` returned.
    private func interruptWhileBlocked<Value: Sendable>(
        _ body: @Sendable @escaping () -> Value, thenRun unblock: () throws -> Void
    ) throws -> Value? {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in interruptions.add(1, ordering: .relaxed) }
        action.sa_flags = 0  // no SA_RESTART: the kernel returns EINTR from read
        sigemptyset(&action.sa_mask)
        #expect(sigaction(SIGUSR1, &action, nil) == 0)

        let blockedThread = Shared<pthread_t?>(nil)
        let result = Shared<Value?>(nil)
        Thread.detachNewThread {
            // Threads start with the creator's mask, and the test runner's threads block SIGUSR1.
            var unblock = sigset_t()
            sigemptyset(&unblock)
            sigaddset(&unblock, SIGUSR1)
            pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
            blockedThread.update { $0 = pthread_self() }
            let outcome = body()
            result.update { $0 = outcome }
        }
        #expect(eventually { blockedThread.value != nil })
        let before = interruptions.load(ordering: .relaxed)
        // Interrupt until the handler has run while the thread sits in read(2).
        usleep(50_000)
        pthread_kill(blockedThread.value!, SIGUSR1)
        #expect(eventually { interruptions.load(ordering: .relaxed) > before })
        usleep(20_000)
        #expect(result.value == nil, "the interrupted call must still be waiting")
        try unblock()
        #expect(eventually { result.value != nil })
        return result.value
    }
}
