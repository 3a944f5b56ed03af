import JSONCore
import Foundation
import Glibc
import Testing
import TestSupport
@testable import ProctorStore

/// What happens when another connection or process holds, abandons or dies in the middle of
/// a transaction on the same database.
@Suite struct InterruptionTests {
    let directory: StoreDirectory
    init() throws { directory = try StoreDirectory() }

    @Test func twoStoresOnOneDatabaseSeeEachOthersCommitsAndCompareAndSwapHolds() throws {
        let first = try directory.openStore()
        let second = try directory.openStore()

        try first.applyForTest("1")
        #expect(try second.currentBundle()?.version == "1")
        try second.applyForTest("2", expected: "1")
        #expect(throws: StoreError.versionConflict(expected: "1", current: "2")) { try first.applyForTest("3", expected: "1") }
        #expect(try first.history().map(\.version) == ["2", "1"])
        first.close()
        second.close()
    }

    @Test func aWriterHoldingTheLockMakesWritesBusyButReadsSeeTheLastCommit() throws {
        var configuration = StateStore.Configuration()
        configuration.busyTimeoutMilliseconds = 50
        let store = try directory.openStore(configuration: configuration)
        let committed = try store.applyForTest("1")

        let other = try RawDatabase(path: directory.databasePath)
        try other.execute("BEGIN IMMEDIATE; INSERT INTO bundles (version, sha256, json, applied_at, applied_by) VALUES ('2', 'x', '{}', 2, 0);")
        #expect(throws: StoreError.busy(path: directory.databasePath)) { try store.applyForTest("3") }
        #expect(try store.currentBundle() == committed)

        // The other writer goes away without committing: its row never existed.
        other.close()
        #expect(try store.history() == [committed])
        try store.applyForTest("3")
        #expect(try store.history().map(\.version) == ["3", "1"])
    }

    /// A foreign `sqlite3` process writes bundle rows the way `apply` does and is killed with
    /// SIGKILL either before or in the middle of committing. After each kill a fresh store
    /// must see a consistent history holding every commit that was acknowledged, and must be
    /// able to write (no stale lock).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3"), "needs the sqlite3 shell"))
    func aWriterKilledMidTransactionLeavesAConsistentDatabase() throws {
        try directory.openStore().close()
        var acknowledged: [String] = []
        var generator = SystemRandomNumberGenerator()

        for round in 1...20 {
            let version = "r\(round)"
            let writer = try ShellProcess(arguments: ["/usr/bin/sqlite3", directory.databasePath])
            try writer.send("""
                PRAGMA synchronous = FULL;
                BEGIN IMMEDIATE;
                INSERT INTO bundles (version, sha256, json, applied_at, applied_by, kind)
                    VALUES ('\(version)', '\(SHA256.hexDigest(of: version))', '\(String(repeating: "p", count: 20_000))', \(round), 0, 'apply');
                SELECT 'inserted';

                """)
            try writer.waitForLine("inserted")
            switch round % 3 {
            case 0:  // killed inside the transaction
                break
            case 1:  // killed after the commit was acknowledged
                try writer.send("COMMIT;\nSELECT 'committed';\n")
                try writer.waitForLine("committed")
                acknowledged.append(version)
            default:  // killed at a random moment while committing
                try writer.send("COMMIT;\n")
                usleep(UInt32.random(in: 0..<2_000, using: &generator))
            }
            writer.kill()

            let store = try directory.openStore()
            let history = try store.history()
            let versions = Set(history.map(\.version))
            #expect(versions.isSuperset(of: acknowledged), "round \(round): lost an acknowledged commit")
            #expect(history.allSatisfy { $0.sha256 == SHA256.hexDigest(of: $0.version) }, "round \(round): a torn row")
            #expect(try store.currentBundle() == history.first)
            #expect(!versions.contains { ["r3", "r6", "r9", "r12", "r15", "r18"].contains($0) }, "an uncommitted row appeared")
            try store.recordRegistration(appID: "probe", at: Int64(round), appVersion: nil, pid: 1, uid: 0)
            store.close()
        }
    }
}

/// A child process fed through a pipe, whose output is read line by line with a deadline.
private final class ShellProcess {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffered = ""

    init(arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    func send(_ text: String) throws {
        try input.fileHandleForWriting.write(contentsOf: Data(text.utf8))
    }

    /// Waits up to 10 s for a line equal to `expected`.
    func waitForLine(_ expected: String) throws {
        let descriptor = output.fileHandleForReading.fileDescriptor
        let deadline = StateStore.currentTime() + 10_000
        while !buffered.split(separator: "\n").contains(Substring(expected)) {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let remaining = deadline - StateStore.currentTime()
            guard remaining > 0, poll(&poller, 1, Int32(remaining)) > 0 else { throw ShellProcessError.timedOut(expected) }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(descriptor, &chunk, chunk.count)
            guard count > 0 else { throw ShellProcessError.ended(buffered) }
            buffered += String(decoding: chunk.prefix(count), as: UTF8.self)
        }
        buffered = ""
    }

    /// SIGKILL, then reap.
    func kill() {
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

private enum ShellProcessError: Error {
    case timedOut(String)
    case ended(String)
}
