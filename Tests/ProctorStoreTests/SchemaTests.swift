import Foundation
import Testing
import TestSupport
@testable import ProctorStore

@Suite struct SchemaTests {
    let directory: StoreDirectory
    init() throws { directory = try StoreDirectory() }

    /// Schema version 1 exactly as the first release wrote it (copied, not derived from `Schema`,
    /// so a later edit of step 1 breaks this test instead of silently passing).
    private static let versionOneSchema = """
        CREATE TABLE bundles (
            id INTEGER PRIMARY KEY AUTOINCREMENT, version TEXT NOT NULL, sha256 TEXT NOT NULL,
            json TEXT NOT NULL, applied_at INTEGER NOT NULL, applied_by INTEGER NOT NULL);
        CREATE TABLE wipes (
            id TEXT PRIMARY KEY, app_id TEXT NOT NULL, issued_at INTEGER NOT NULL, issued_by INTEGER NOT NULL,
            delivered_at INTEGER, completed_at INTEGER);
        CREATE INDEX wipes_by_app ON wipes (app_id, issued_at);
        PRAGMA user_version = 1;
        """

    @Test func aVersionOneDatabaseIsMigratedKeepingItsData() throws {
        let raw = try RawDatabase(path: directory.databasePath)
        try raw.execute(Self.versionOneSchema)
        try raw.execute("""
            INSERT INTO bundles (version, sha256, json, applied_at, applied_by) VALUES ('old', 'abc', '{"v":"old"}', 5, 0);
            INSERT INTO wipes (id, app_id, issued_at, issued_by) VALUES ('w1', 'com.example.notes', 7, 0);
            """)
        raw.close()

        let store = try directory.openStore()
        let current = try #require(try store.currentBundle())
        #expect(current.version == "old" && current.kind == .apply && current.canonicalJSON == #"{"v":"old"}"#)
        #expect(try store.pendingWipes(appID: "com.example.notes").map(\.id) == ["w1"])
        // Tables added by step 2 work.
        try store.recordFeedback(appID: "com.example.notes", key: "k", severity: .error, message: "m", data: nil, at: 9)
        try store.rollback(to: "old", at: 10, byUID: 0)
        #expect(try store.history().map(\.kind) == [.rollback, .apply])
        store.close()

        let check = try RawDatabase(path: directory.databasePath)
        #expect(try check.integer("PRAGMA user_version") == Int64(Schema.latestVersion))
    }

    @Test func aDatabaseFromANewerBuildIsRefusedAndLeftAlone() throws {
        let raw = try RawDatabase(path: directory.databasePath)
        try raw.execute("CREATE TABLE future (x); PRAGMA user_version = \(Schema.latestVersion + 1);")
        raw.close()

        #expect(throws: StoreError.schemaTooNew(found: Schema.latestVersion + 1, supported: Schema.latestVersion)) {
            try directory.openStore()
        }
        let check = try RawDatabase(path: directory.databasePath)
        #expect(try check.integer("PRAGMA user_version") == Int64(Schema.latestVersion + 1))
        #expect(try check.integer("SELECT count(*) FROM sqlite_master WHERE name = 'bundles'") == 0)
    }

    @Test func aFreshDatabaseUsesWALFullSyncAndTheLatestSchema() throws {
        let store = try StateStore.open(directory: directory.appending("nested").path)
        #expect(try store.connection.query("PRAGMA journal_mode") { $0.text(0) } == ["wal"])
        #expect(try store.connection.query("PRAGMA synchronous") { $0.integer(0) } == [2])  // FULL
        #expect(try store.connection.query("PRAGMA foreign_keys") { $0.integer(0) } == [1])
        #expect(try store.connection.query("PRAGMA user_version") { $0.integer(0) } == [Int64(Schema.latestVersion)])
        #expect(FileManager.default.fileExists(atPath: directory.appending("nested/state.db").path))
    }

    @Test func databaseDescriptorsAreCloseOnExec() throws {
        let store = try directory.openStore()
        try store.applyForTest("1")
        var checked = 0
        for entry in try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)"),
                  target.hasPrefix(directory.path) else { continue }
            let info = try String(contentsOfFile: "/proc/self/fdinfo/\(entry)", encoding: .utf8)
            let flagsLine = try #require(info.split(separator: "\n").first { $0.hasPrefix("flags:") })
            let flags = try #require(Int(flagsLine.split(separator: "\t").last ?? "", radix: 8))
            #expect(flags & Int(O_CLOEXEC) != 0, "\(target) is inherited by child processes")
            checked += 1
        }
        #expect(checked >= 2)  // state.db and its -wal at least
        store.close()
    }
}

@Suite struct CorruptionTests {
    let directory: StoreDirectory
    init() throws { directory = try StoreDirectory() }

    @Test func aFileThatIsNotADatabaseIsMovedAsideAndAFreshOneCreated() throws {
        let garbage = Data(repeating: 0xA5, count: 8192)
        try garbage.write(to: URL(fileURLWithPath: directory.databasePath))
        try Data("stale wal".utf8).write(to: URL(fileURLWithPath: directory.appending("state.db-wal").path))

        // 2026-11-29 12:00:00 UTC
        let store = try directory.openStore(now: 1_795_953_600_000)
        let recovery = try #require(store.recoveredCorruption)
        #expect(recovery.movedTo == directory.appending("state.db.corrupt-20261129T120000Z").path)
        #expect(FileManager.default.contents(atPath: recovery.movedTo) == garbage)
        #expect(FileManager.default.contents(atPath: recovery.movedTo + "-wal") == Data("stale wal".utf8))
        #expect(!recovery.reason.isEmpty)

        try store.applyForTest("1")
        #expect(try store.currentBundle()?.version == "1")
        store.close()
        let reopened = try directory.openStore(now: 1_795_953_600_000)
        #expect(reopened.recoveredCorruption == nil)
        #expect(try reopened.currentBundle()?.version == "1")
    }

    @Test func aDamagedPageIsDetectedAndASecondCorruptionGetsItsOwnName() throws {
        let path = directory.databasePath
        let store = try directory.openStore()
        for version in 1...5 { try store.applyForTest("\(version)", padding: 3000) }
        try store.connection.run("PRAGMA wal_checkpoint(TRUNCATE)")
        store.close()

        // Overwrite everything after the header page: the header still says "SQLite format 3".
        var bytes = try #require(FileManager.default.contents(atPath: path))
        #expect(bytes.count > 8192)
        bytes.replaceSubrange(4096..<bytes.count, with: Data(repeating: 0x5A, count: bytes.count - 4096))
        try bytes.write(to: URL(fileURLWithPath: path))
        try Data("taken".utf8).write(to: URL(fileURLWithPath: path + ".corrupt-19700101T000001Z"))

        let recovered = try directory.openStore(now: 1_000)
        #expect(recovered.recoveredCorruption?.movedTo == path + ".corrupt-19700101T000001Z-1")
        #expect(try recovered.currentBundle() == nil)
        #expect(FileManager.default.contents(atPath: path + ".corrupt-19700101T000001Z") == Data("taken".utf8))
    }
}
