import Glibc
import Testing
@testable import SystemdKit

@Suite struct LogTargetTests {
    /// `JOURNAL_STREAM` as systemd would set it for `descriptor`.
    private func journalStream(of descriptor: CInt) -> String {
        var status = stat()
        #expect(fstat(descriptor, &status) == 0)
        return "\(status.st_dev):\(status.st_ino)"
    }

    @Test func journalWhenStreamMatchesStderr() throws {
        let pipe = try Pipe()
        #expect(LogTarget.detect(journalStream: journalStream(of: pipe.write), standardError: pipe.write) == .journal)
    }

    @Test func stderrWhenStreamNamesAnotherFile() throws {
        let journal = try Pipe(), redirected = try Pipe()
        #expect(LogTarget.detect(journalStream: journalStream(of: journal.write), standardError: redirected.write) == .stderr)
    }

    @Test func stderrWhenUnsetOrMalformed() throws {
        let pipe = try Pipe()
        let valid = journalStream(of: pipe.write)
        for stream in [nil, "", "12", "a:b", "\(valid):1", valid + "x", ":" + valid] as [String?] {
            #expect(LogTarget.detect(journalStream: stream, standardError: pipe.write) == .stderr, "\(stream ?? "nil")")
        }
    }

    @Test func stderrWhenDescriptorIsClosed() throws {
        let pipe = try Pipe()
        let stream = journalStream(of: pipe.write)
        #expect(LogTarget.detect(journalStream: stream, standardError: -1) == .stderr)
    }

    @Test func settingsForceOrDetect() {
        #expect(LogTarget.Setting(rawValue: "journal")?.resolve() == .journal)
        #expect(LogTarget.Setting(rawValue: "stderr")?.resolve() == .stderr)
        #expect(LogTarget.Setting(rawValue: "syslog") == nil)
        #expect(LogTarget.Setting.allCases.map(\.rawValue) == ["auto", "journal", "stderr"])
    }
}
