import Glibc
import LinuxIO
import Testing
@testable import SystemdKit

/// These tests change the process environment, so they run one at a time. The positive case
/// (real descriptors 3 and 4 from systemd) runs in Tests/systemd, where systemd hands them over.
@Suite(.serialized) struct ListenedSocketsTests {
    private func withEnvironment(_ values: [String: String], _ body: () throws -> Void) throws {
        for (name, value) in values { setenv(name, value, 1) }
        defer { for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { unsetenv(name) } }
        try body()
    }

    @Test func emptyWhenNotActivated() throws {
        unsetenv("LISTEN_PID")
        unsetenv("LISTEN_FDS")
        #expect(try ListenedSockets.receive().isEmpty)
    }

    @Test func emptyWhenTheSocketsAreForAnotherProcess() throws {
        try withEnvironment(["LISTEN_PID": String(getpid() + 1), "LISTEN_FDS": "2", "LISTEN_FDNAMES": "agent:admin"]) { () throws in
            #expect(try ListenedSockets.receive().isEmpty)
            #expect(getenv("LISTEN_FDS") == nil, "the variables are removed either way")
        }
    }

    @Test func malformedCountIsATypedError() throws {
        try withEnvironment(["LISTEN_PID": String(getpid()), "LISTEN_FDS": "two"]) {
            #expect(throws: ListenedSockets.Failure.invalidEnvironment(Errno(rawValue: EINVAL))) { try ListenedSockets.receive() }
        }
    }

    @Test func namesThatDoNotMatchTheCountAreATypedError() throws {
        try withEnvironment(["LISTEN_PID": String(getpid()), "LISTEN_FDS": "2", "LISTEN_FDNAMES": "agent"]) {
            #expect(throws: ListenedSockets.Failure.invalidEnvironment(Errno(rawValue: EINVAL))) { try ListenedSockets.receive() }
        }
    }

    @Test func failureTextNamesTheVariables() {
        #expect(ListenedSockets.Failure.invalidEnvironment(Errno(rawValue: EINVAL)).description.contains("LISTEN_FDS"))
    }
}
