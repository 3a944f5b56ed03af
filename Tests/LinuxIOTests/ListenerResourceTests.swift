import Glibc
@testable import LinuxIO
import Testing
import TestSupport

@Suite struct ListenerResourceTests {
    /// Out of descriptors, accept fails with EMFILE while the connection stays pending, so a
    /// level-triggered loop would spin on it. The listener must report the failure and pause.
    /// The descriptor limit is per process, so the listener runs in a forked child (one thread,
    /// see SignalTests) whose limit leaves room for exactly one connection.
    @Test func runningOutOfDescriptorsPausesAcceptingInsteadOfSpinning() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/limited.sock"
        let socket = try UnixSocket.listen(path: path, mode: 0o600)
        defer { try? socket.close() }
        _ = try serveWithOneFreeDescriptor(socket, window: .zero)  // warm up in the parent
        let child = fork()
        if child == 0 {
            closeInheritedDescriptors(except: [socket.rawValue])
            let outcome = try? serveWithOneFreeDescriptor(socket, window: .milliseconds(350))
            // 1 accepted, and with a 100 ms pause at most a few failures instead of thousands.
            let ok = outcome.map { $0.accepted == 1 && (1...5).contains($0.failures) && $0.onlyEMFILE } ?? false
            _exit(ok ? 0 : 1)
        }
        #expect(child > 0)
        var clients: [FileDescriptor] = []
        defer { clients.forEach { try? $0.close() } }
        for _ in 0..<3 { clients.append(try UnixSocket.connect(path: path)) }
        let status = waitForForkedChild(child)
        #expect(status == 0, "raw wait status \(String(describing: status))")
    }

    private struct Outcome { var accepted = 0; var failures = 0; var onlyEMFILE = true }

    private func serveWithOneFreeDescriptor(_ socket: FileDescriptor, window: Duration) throws -> Outcome {
        let loop = try EventLoop()
        var outcome = Outcome()
        var connections: [StreamConnection] = []
        connections.reserveCapacity(4)
        let listener = try UnixListener(descriptor: FileDescriptor(rawValue: dup(socket.rawValue)), loop: loop,
                                        maxConnections: 10)
        listener.onConnection = { connection, _ in
            outcome.accepted += 1
            connections.append(connection)
        }
        listener.onAcceptError = { errno in
            outcome.failures += 1
            if errno != .tooManyOpenFiles { outcome.onlyEMFILE = false }
        }
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        let original = limit
        if window > .zero {
            // The lowest free descriptor is the next one handed out: allow it and no more.
            let probe = dup(0)
            close(probe)
            limit.rlim_cur = rlim_t(probe + 1)
            setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        }
        loop.schedule(after: window) { loop.stop() }
        try loop.run()
        var restore = original
        setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &restore)
        listener.close()
        connections.forEach { $0.close() }
        return outcome
    }
}
