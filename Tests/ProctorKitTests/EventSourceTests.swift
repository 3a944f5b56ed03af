import Foundation
@testable import ProctorKit
import Testing

/// The event sources that this machine may lack (logind, PSI) fail in a way the application
/// can report and survive.
@MainActor
@Suite struct EventSourceTests {
    @Test func processOutsideAnySessionIsOutsideSession() throws {
        let cgroups = try String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8)
        // sd_pid_get_session reads the session from a "session-N.scope" cgroup.
        try #require(!cgroups.contains("/session-"), "this test runs inside a login session")
        guard case .outsideSession = SessionMonitor.lookUp() else {
            Issue.record("a process in cgroup \(cgroups) should be outside any session")
            return
        }
    }

    @Test func missingPressureFileIsAnErrorNamingTheFile() {
        #expect(throws: SystemCallError(call: "open /nonexistent/pressure", errno: .noSuchFileOrDirectory)) {
            try MemoryPressureMonitor.start(path: "/nonexistent/pressure") {}
        }
    }

    @Test func fileThatRefusesTriggersIsAnError() throws {
        // /proc/self/stat is read-only: arming a trigger there fails, as where PSI is missing.
        #expect(throws: SystemCallError.self) {
            try MemoryPressureMonitor.start(path: "/proc/self/stat") {}
        }
    }
}
