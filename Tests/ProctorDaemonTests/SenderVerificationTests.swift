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

    @Test func aMessageOfSeveralWritersNamesNoSender() {
        #expect(throws: UnverifiableSender.self) { try PeerIdentity(verifyingSender: nil) }
    }
}
