import Glibc
import LinuxIO
import Testing
@testable import SystemdKit

/// A datagram socket standing in for systemd's notification socket: sd_notify really sends
/// to it, and the test reads what arrived.
private final class NotificationSocket {
    let descriptor: CInt
    let path: String

    init() throws {
        path = "/tmp/proctor-notify-test-\(getpid())-\(UInt32.random(in: 0 ... .max)).socket"
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Pipe.Failure(errno: errno) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            for (index, byte) in path.utf8.enumerated() { bytes[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw Pipe.Failure(errno: errno) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    func receive() -> [String] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        guard count > 0 else { return [] }
        return String(decoding: buffer[0 ..< count], as: UTF8.self).split(separator: "\n").map(String.init)
    }

    deinit {
        close(descriptor)
        unlink(path)
    }
}

/// Changes NOTIFY_SOCKET and WATCHDOG_*, so one test at a time.
@Suite(.serialized) struct SystemdNotifierTests {
    @Test func sendsToTheNotifySocket() throws {
        let socket = try NotificationSocket()
        setenv("NOTIFY_SOCKET", socket.path, 1)
        defer { unsetenv("NOTIFY_SOCKET") }
        let notifier = SystemdNotifier()
        #expect(notifier.isEnabled)
        #expect(try notifier.ready(status: "policy 1, 2 apps\nmanaged"))
        #expect(socket.receive() == ["READY=1", "STATUS=policy 1, 2 apps managed"])
        #expect(try notifier.stopping(status: "bye"))
        #expect(socket.receive() == ["STOPPING=1", "STATUS=bye"])
        #expect(try notifier.failed(status: "cannot bind", errno: EADDRINUSE))
        #expect(socket.receive() == ["STATUS=cannot bind", "ERRNO=\(EADDRINUSE)"])
        #expect(try notifier.watchdogPing())
        #expect(socket.receive() == ["WATCHDOG=1"])
        let before = MonotonicClock.microseconds()
        #expect(try notifier.reloading(status: "reloading"))
        let reloading = socket.receive()
        #expect(reloading.first == "RELOADING=1")
        let stamp = reloading.dropFirst().first.flatMap { UInt64($0.dropFirst("MONOTONIC_USEC=".count)) } ?? 0
        #expect(stamp >= before && stamp <= MonotonicClock.microseconds())
    }

    @Test func isANoOpOutsideSystemd() throws {
        unsetenv("NOTIFY_SOCKET")
        #expect(!SystemdNotifier().isEnabled)
        #expect(try SystemdNotifier().ready(status: "x") == false)
    }

    @Test func aMissingSocketIsAnError() {
        setenv("NOTIFY_SOCKET", "/nonexistent/notify.socket", 1)
        defer { unsetenv("NOTIFY_SOCKET") }
        #expect(throws: SystemdNotifier.Failure(errno: .noSuchFileOrDirectory)) { try SystemdNotifier().status("x") }
    }

    @Test func watchdogIntervalIsHalfOfWatchdogUsec() throws {
        setenv("WATCHDOG_USEC", "3000000", 1)
        setenv("WATCHDOG_PID", String(getpid()), 1)
        defer { unsetenv("WATCHDOG_USEC"); unsetenv("WATCHDOG_PID") }
        #expect(try SystemdNotifier().watchdogPingInterval() == .milliseconds(1500))
        setenv("WATCHDOG_PID", String(getpid() + 1), 1)
        #expect(try SystemdNotifier().watchdogPingInterval() == nil, "a watchdog armed for another process")
        setenv("WATCHDOG_PID", String(getpid()), 1)
        setenv("WATCHDOG_USEC", "soon", 1)
        #expect(throws: SystemdNotifier.Failure(errno: .invalidArgument)) { try SystemdNotifier().watchdogPingInterval() }
    }

    @Test func noWatchdogWithoutTheVariables() throws {
        unsetenv("WATCHDOG_USEC")
        #expect(try SystemdNotifier().watchdogPingInterval() == nil)
    }
}
