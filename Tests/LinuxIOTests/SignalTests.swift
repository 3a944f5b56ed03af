import Glibc
@testable import LinuxIO
import Testing

@Suite struct SignalTests {
    /// `kill(getpid(), …)` reaches a signalfd only when every thread of the process blocks the
    /// signal; otherwise a thread that does not (the test runner unblocks them on its main
    /// thread) takes the default action and the whole run dies. A forked child has one thread,
    /// the one that forked, so it is a process that keeps the contract proctord keeps by
    /// calling `onSignal` on its main thread before starting any other.
    ///
    /// The loop is created in the child (epoll reports a signalfd ready only to the process
    /// that registered it); the same code runs once in the parent first so that nothing the
    /// child needs is still being set up by another thread at the moment of the fork.
    @Test func killOfThisProcessReachesTheLoopAsSIGHUPThenSIGTERM() throws {
        #expect(try receiveOwnSignals(sending: []) == [])
        let child = fork()
        if child == 0 {
            closeInheritedDescriptors()
            let received = (try? receiveOwnSignals(sending: [SIGHUP, SIGTERM])) ?? []
            _exit(received == [SIGHUP, SIGTERM] ? 0 : 1)
        }
        #expect(child > 0)
        guard let status = waitForForkedChild(child) else {
            Issue.record("the child's loop did not see its signals within 5 seconds")
            return
        }
        #expect(status == 0, "raw wait status \(status): 1 << 8 means the wrong signals arrived, a small number the signal that killed it")
    }

    /// Sends `signals` to this process and collects what the loop's signal handler receives
    /// until SIGTERM, or nothing within 2 seconds.
    private func receiveOwnSignals(sending signals: [CInt]) throws -> [CInt] {
        let loop = try EventLoop()
        var received: [CInt] = []
        received.reserveCapacity(4)
        try loop.onSignal([SIGHUP, SIGTERM]) { signal in
            received.append(signal)
            if signal == SIGTERM { loop.stop() }
        }
        let timeout = loop.schedule(after: signals.isEmpty ? .zero : .seconds(2)) { loop.stop() }
        for signal in signals { kill(getpid(), signal) }
        try loop.run()
        loop.cancel(timeout)
        return received
    }
}
