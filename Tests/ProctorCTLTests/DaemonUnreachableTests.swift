import Foundation
import LinuxIO
import ProctorCTL
import Testing
import TestSupport

/// A proctord that is not running is one clear line and exit status 3, for every verb.
@Suite struct DaemonUnreachableTests {
    /// Each online command with arguments that are valid, so only the connection can fail.
    static let onlineCommands: [(words: [String], arguments: [String])] = [
        (["status"], []), (["apps"], []), (["app"], ["com.example.notes"]), (["policy", "show"], []),
        (["policy", "apply"], ["config/examples"]), (["policy", "diff"], ["config/examples"]), (["policy", "history"], []),
        (["policy", "rollback"], ["2026-11-29.1"]), (["reload"], []), (["check"], ["com.example.notes", "print"]),
        (["wipe"], ["com.example.notes"]), (["notify"], ["com.example.notes", "{}"]), (["events"], []),
        (["events"], ["--follow"]), (["metrics"], []),
    ]

    @Test func everyOnlineCommandIsListedHere() {
        let online = ProctorCTL.verbs.filter { $0.options.contains { $0.name == "--address" } }.map(\.words)
        #expect(Set(online) == Set(Self.onlineCommands.map(\.words)))
    }

    @Test(arguments: onlineCommands)
    func aMissingSocketIsOneLineAndExitThree(_ words: [String], _ arguments: [String]) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let address = directory.path + "/io.proctor.Admin"
        let result = try proctorctl(words + arguments + ["--address", address])
        #expect(result.status == 3)
        #expect(result.output == "")
        #expect(result.error == "proctorctl: proctord is not running at \(address)\n")
    }

    @Test func aSocketFileNobodyListensOnIsNotRunningToo() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let address = directory.path + "/io.proctor.Admin"
        // Bound but closed: what a crashed proctord leaves behind.
        let listener = try UnixSocket.listen(path: address, mode: 0o600)
        try listener.close()
        let result = try proctorctl(["status"], environment: ["PROCTOR_ADMIN_SOCKET": address])
        #expect(result.status == 3)
        #expect(result.error == "proctorctl: proctord is not running at \(address)\n")
    }

    @Test func theAddressComesFromTheOptionThenTheEnvironmentThenTheDefault() throws {
        let option = try proctorctl(["status", "--address", "/nonexistent/a"], environment: ["PROCTOR_ADMIN_SOCKET": "/nonexistent/b"])
        #expect(option.error == "proctorctl: proctord is not running at /nonexistent/a\n")
        let environment = try proctorctl(["status"], environment: ["PROCTOR_ADMIN_SOCKET": "/nonexistent/b"])
        #expect(environment.error == "proctorctl: proctord is not running at /nonexistent/b\n")
        // Split at the first "=" byte, though "=\u{301}" is one Character (which is not "=").
        let combining = try proctorctl(["status"], environment: ["PROCTOR_ADMIN_SOCKET": "\u{301}/nonexistent/c"])
        #expect(combining.error == "proctorctl: proctord is not running at \u{301}/nonexistent/c\n")
        let fallback = try proctorctl(["apps"])
        if !FileManager.default.fileExists(atPath: "/run/proctor/io.proctor.Admin") {
            #expect(fallback.error == "proctorctl: proctord is not running at /run/proctor/io.proctor.Admin\n")
        }
    }

    @Test func aReplyOfTheWrongShapeIsExitThreeNamingTheField() throws {
        let server = try FakeAdminServer(replies: ["Status": { _ in ["version": 1] }], checkingReplies: false)
        defer { server.stop() }
        let result = try proctorctl(["status", "--address", server.path])
        #expect(result.status == 3)
        #expect(result.output == "")
        #expect(result.error == "proctorctl: cannot talk to proctord at \(server.path): unexpected reply: Status.version is "
            + "a number, expected a string\n")
        let wrongType = try FakeAdminServer(replies: ["ListApps": { _ in ["apps": [["appId": 7]]] }], checkingReplies: false)
        defer { wrongType.stop() }
        let apps = try proctorctl(["apps", "--address", wrongType.path])
        #expect(apps.status == 3)
        #expect(apps.error == "proctorctl: cannot talk to proctord at \(wrongType.path): unexpected reply: ListApps.apps[0].appId "
            + "is a number, expected a string\n")
    }

    @Test func aServiceThatHangsUpMidCallIsExitThreeWithTheReason() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let address = directory.path + "/io.proctor.Admin"
        let listener = try UnixSocket.listen(path: address, mode: 0o600)
        try listener.setNonBlocking(false)
        defer { try? listener.close() }
        // Accept one connection, read the call, and close without a reply.
        let thread = Thread {
            guard let connection = try? UnixSocket.accept(on: listener) else { return }
            try? connection.setNonBlocking(false)
            var buffer = [UInt8](repeating: 0, count: 4096)
            _ = try? buffer.withUnsafeMutableBytes { bytes throws(Errno) in try connection.read(into: bytes) }
            try? connection.close()
        }
        thread.start()
        let result = try proctorctl(["status", "--address", address])
        #expect(result.status == 3)
        #expect(result.error == "proctorctl: cannot talk to proctord at \(address): the service closed the connection\n")
    }
}
