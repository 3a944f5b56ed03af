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

    @Test func namesAsSdListenFdsWithNamesSplitsThem() throws {
        func names(_ pid: String?, _ count: String?, _ names: String?) throws(ListenedSockets.Failure) -> [String] {
            try ListenedSockets.descriptorNames(listenPID: pid, count: count, names: names, ownProcessID: 700)
        }
        #expect(try names("700", "2", "agent:admin") == ["agent", "admin"])
        #expect(try names("700", "3", "a::b") == ["a", "", "b"], "empty names are kept, as systemd writes them")
        #expect(try names("700", "2", nil) == ["unknown", "unknown"])
        #expect(try names("701", "2", "agent:admin").isEmpty, "sockets for another process")
        #expect(try names(nil, "2", "agent:admin").isEmpty)
        #expect(try names("700", nil, "agent").isEmpty)
        for (pid, count, given) in [("700", "0", ""), ("700", "-1", "x"), ("700", "2", "a:b:c"), ("700", "1", ""), ("700", "2 ", "a:b"),
                                    ("0", "1", "a"), ("seven", "1", "a"), ("700", "2147483645", nil)] as [(String, String, String?)] {
            #expect(throws: ListenedSockets.Failure.invalidEnvironment(.invalidArgument), "\(pid) \(count) \(given ?? "nil")") {
                try names(pid, count, given)
            }
        }
    }

    /// Two real sockets where systemd would put them (here counted from a high descriptor: the
    /// test process already uses 3 and 4): taken by name, close-on-exec set, variables gone.
    @Test func takesTheDescriptorsByNameAndSetsCloseOnExec() throws {
        let (first, second) = try UnixSocket.pair()
        defer { try? first.close(); try? second.close() }
        let start: CInt = 900
        for (offset, socket) in [first, second].enumerated() {
            #expect(dup2(socket.rawValue, start + CInt(offset)) == start + CInt(offset))  // dup2 clears FD_CLOEXEC
        }
        defer { close(start); close(start + 1) }
        #expect(fcntl(start, F_GETFD) & FD_CLOEXEC == 0)
        try withEnvironment(["LISTEN_PID": String(getpid()), "LISTEN_FDS": "2", "LISTEN_FDNAMES": "agent:admin"]) { () throws in
            #expect(try ListenedSockets.receive(from: start) == ["agent": [start], "admin": [start + 1]])
            for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { #expect(getenv(name) == nil) }
        }
        #expect(fcntl(start, F_GETFD) & FD_CLOEXEC != 0 && fcntl(start + 1, F_GETFD) & FD_CLOEXEC != 0)
    }

    @Test func aDescriptorThatIsNotOpenIsATypedError() throws {
        try withEnvironment(["LISTEN_PID": String(getpid()), "LISTEN_FDS": "1"]) {
            #expect(throws: ListenedSockets.Failure.cannotSetCloseOnExec(descriptor: 950, .badFileDescriptor)) {
                try ListenedSockets.receive(from: 950)
            }
            #expect(getenv("LISTEN_FDS") == nil)
        }
    }

    @Test func failureTextNamesTheVariables() {
        #expect(ListenedSockets.Failure.invalidEnvironment(Errno(rawValue: EINVAL)).description.contains("LISTEN_FDS"))
    }
}
