import Foundation
import Glibc
import LinuxIO
@testable import ProctorDaemon
import Testing
import TestSupport

/// `PeerIdentity(verifyingSender:)` on real processes: the sender of a message is named
/// only while the pid still means that process.
@Suite struct SenderVerificationTests {
    private func sender(_ pid: pid_t, process: ProcessHandle?) -> SenderCredentials {
        SenderCredentials(pid: pid, uid: getuid(), gid: getgid(), process: process)
    }

    @Test func aLiveSenderIsReadWithOrWithoutAPidfd() throws {
        let own = try FileIdentity(ofPath: "/proc/self/exe")
        let withPidfd = try PeerIdentity(verifyingSender: sender(getpid(), process: try ProcessHandle.open(pid: getpid())))
        #expect(withPidfd.executableFile == own && withPidfd.pid == getpid() && withPidfd.startTime != nil)
        let byStartTime = try PeerIdentity(verifyingSender: sender(getpid(), process: nil))
        #expect(byStartTime.executableFile == own && byStartTime.startTime == withPidfd.startTime)
    }

    @Test func aSenderThatExitedIsRefused() throws {
        let child = try ChildProcess(URL(fileURLWithPath: "/bin/sleep"), arguments: ["30"])
        let handle = try ProcessHandle.open(pid: child.pid)
        try child.send(SIGKILL)
        _ = try child.waitForExit()
        #expect(throws: UnverifiableSender(reason: "pid \(child.pid) exited before it could be verified")) {
            try PeerIdentity(verifyingSender: sender(child.pid, process: handle))
        }
        #expect(throws: UnverifiableSender(reason: "pid \(child.pid) exited or was replaced while it was being verified")) {
            try PeerIdentity(verifyingSender: sender(child.pid, process: nil))
        }
    }

    /// A session answers only the process that registered it: the pid stamped on each
    /// message must be its own, and that process must have lived after the message was
    /// received, so a message sent under its pid after it exited (a reused pid) is refused.
    @Test func aSessionIsItsRegisteringProcessWhileThatLives() throws {
        let child = try ChildProcess(URL(fileURLWithPath: "/bin/sleep"), arguments: ["30"])
        let handle = try ProcessHandle.open(pid: child.pid)
        let peer = PeerIdentity(pid: child.pid, uid: getuid(), gid: getgid(), executable: nil, userName: nil, groups: [])
        let session = AgentSession(id: "session", appID: "com.example.app", peer: peer, process: handle, appVersion: nil,
                                   registeredAt: 0)
        var reads: UInt64 = 0
        func message(from pid: pid_t) -> SenderCredentials {
            reads += 1
            return SenderCredentials(pid: pid, uid: getuid(), gid: getgid(), receipt: reads)
        }
        let whileAlive = message(from: child.pid)
        #expect(session.isRegisteringProcess(whileAlive))
        #expect(!session.isRegisteringProcess(message(from: getpid())))
        #expect(!session.isRegisteringProcess(nil))

        try child.send(SIGKILL)
        // Not reaped yet, so the pid stays taken while the test looks.
        let deadline = MonotonicClock.nanoseconds() + 10_000_000_000
        while try handle.isAlive, MonotonicClock.nanoseconds() < deadline { usleep(1_000) }
        #expect(session.isRegisteringProcess(whileAlive), "received while the process was seen alive afterwards")
        #expect(!session.isRegisteringProcess(message(from: child.pid)), "received after the process exited")
        _ = try child.waitForExit()
    }

    @Test func aMessageOfSeveralWritersNamesNoSender() {
        #expect(throws: UnverifiableSender.self) { try PeerIdentity(verifyingSender: nil) }
    }
}
