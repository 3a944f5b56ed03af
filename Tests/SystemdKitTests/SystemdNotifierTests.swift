import Glibc
import LinuxIO
import Testing
@testable import SystemdKit

/// Changes NOTIFY_SOCKET and WATCHDOG_*, so one test at a time.
@Suite(.serialized) struct SystemdNotifierTests {
    @Test(arguments: [false, true]) func sendsToTheNotifySocket(abstract: Bool) throws {
        let socket = try DatagramReceiver(abstract: abstract)
        setenv("NOTIFY_SOCKET", socket.address, 1)
        defer { unsetenv("NOTIFY_SOCKET") }
        let notifier = SystemdNotifier()
        #expect(notifier.isEnabled)
        #expect(try notifier.ready(status: "policy 1, 2 apps\nmanaged"))
        #expect(socket.receive()?.lines == ["READY=1", "STATUS=policy 1, 2 apps managed"])
        #expect(try notifier.stopping(status: "bye"))
        #expect(socket.receive()?.lines == ["STOPPING=1", "STATUS=bye"])
        #expect(try notifier.failed(status: "cannot bind", errno: EADDRINUSE))
        #expect(socket.receive()?.lines == ["STATUS=cannot bind", "ERRNO=\(EADDRINUSE)"])
        #expect(try notifier.watchdogPing())
        #expect(socket.receive()?.lines == ["WATCHDOG=1"])
        let before = MonotonicClock.microseconds()
        #expect(try notifier.reloading(status: "reloading"))
        let reloading = socket.receive()?.lines
        #expect(reloading?.first == "RELOADING=1")
        let stamp = reloading?.dropFirst().first.flatMap { UInt64($0.dropFirst("MONOTONIC_USEC=".count)) } ?? 0
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

    /// The message is one datagram with nothing around it, and NOTIFY_SOCKET stays set.
    @Test func oneDatagramPerMessageAndTheVariableStays() throws {
        let socket = try DatagramReceiver()
        setenv("NOTIFY_SOCKET", socket.address, 1)
        defer { unsetenv("NOTIFY_SOCKET") }
        #expect(try SystemdNotifier().notify(["READY=1", "STATUS=up"]))
        #expect(socket.receive()?.bytes == Array("READY=1\nSTATUS=up".utf8))
        #expect(getenv("NOTIFY_SOCKET") != nil)
    }

    @Test(arguments: [("notify.socket", EAFNOSUPPORT), ("", EAFNOSUPPORT), ("@", EINVAL), ("/" + String(repeating: "x", count: 107), EINVAL),
                      ("@" + String(repeating: "x", count: 108), EINVAL)])
    func anUnusableAddressIsAnError(address: String, errno: Int32) {
        setenv("NOTIFY_SOCKET", address, 1)
        defer { unsetenv("NOTIFY_SOCKET") }
        #expect(throws: SystemdNotifier.Failure(errno: Errno(rawValue: errno))) { try SystemdNotifier().status("x") }
    }

    /// The longest path and abstract name a sockaddr_un holds still work.
    @Test func theLongestAddressesFit() throws {
        let abstract = "@" + String(repeating: "a", count: 107)
        #expect(throws: Errno.connectionRefused) { try UnixDatagramSocket().send([1], to: UnixSocketAddress(systemdSocket: abstract)) }
        let path = "/" + String(repeating: "p", count: 106)
        #expect(throws: Errno.noSuchFileOrDirectory) { try UnixDatagramSocket().send([1], to: UnixSocketAddress(systemdSocket: path)) }
    }

    @Test func watchdogVariablesAsSdWatchdogEnabledReadsThem() throws {
        let me: pid_t = 4242
        #expect(try SystemdNotifier.watchdogPingInterval(timeout: "3000000", processID: nil, ownProcessID: me) == .milliseconds(1500))
        #expect(try SystemdNotifier.watchdogPingInterval(timeout: "3000000", processID: "4242", ownProcessID: me) == .milliseconds(1500))
        #expect(try SystemdNotifier.watchdogPingInterval(timeout: "3000000", processID: "4243", ownProcessID: me) == nil)
        #expect(try SystemdNotifier.watchdogPingInterval(timeout: nil, processID: "4242", ownProcessID: me) == nil)
        for (timeout, processID) in [("0", "4242"), ("-5", "4242"), ("18446744073709551615", "4242"), ("3s", "4242"),
                                     ("", "4242"), ("3000000", "0"), ("3000000", "pid"), ("3000000", "")] {
            #expect(throws: SystemdNotifier.Failure(errno: .invalidArgument), "\(timeout) \(processID)") {
                try SystemdNotifier.watchdogPingInterval(timeout: timeout, processID: processID, ownProcessID: me)
            }
        }
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
