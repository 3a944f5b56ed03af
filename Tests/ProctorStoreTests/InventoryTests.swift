import Glibc
import Testing
import TestSupport
@testable import ProctorStore

@Suite struct InventoryTests {
    let directory: StoreDirectory
    init() throws { directory = try StoreDirectory() }

    @Test func theInventoryHoldsTheLatestOfEverythingPerApp() throws {
        let store = try directory.openStore()
        #expect(try store.app(appID: "com.example.notes") == nil)

        try store.recordRegistration(appID: "com.example.notes", at: 1, appVersion: "2.0", pid: 10, uid: 1000)
        try store.recordRegistration(appID: "com.example.notes", at: 2, appVersion: nil, pid: 11, uid: 1001)
        try store.appendEvents([], lifecycle: [LifecycleUpdate(appID: "com.example.notes", event: "didFinishLaunching", at: 3)],
                               retention: EventRetention(maxCount: 10, maxAge: 1000), now: 3)
        try store.appendEvents([], lifecycle: [LifecycleUpdate(appID: "com.example.notes", event: "didEnterBackground", at: 4)],
                               retention: EventRetention(maxCount: 10, maxAge: 1000), now: 4)
        try store.recordPolicyAcknowledgement(appID: "com.example.notes", policyVersion: "1", status: .applied, at: 5)
        try store.recordPolicyAcknowledgement(appID: "com.example.notes", policyVersion: "2", status: .unsupported, at: 6)
        try store.recordPolicyAcknowledgement(appID: "com.example.notes", policyVersion: "1", status: .error, at: 7)
        let wipe = try store.issueWipe(appID: "com.example.notes", issuedAt: 8, byUID: 0)
        try store.recordFeedback(appID: "com.example.mail", key: "k", severity: .info, message: "", data: nil, at: 9)
        store.close()

        let reopened = try directory.openStore()
        let app = try #require(try reopened.app(appID: "com.example.notes"))
        #expect(app.registration == RegistrationRecord(at: 2, appVersion: nil, pid: 11, uid: 1001))
        #expect(app.lastEvent == LifecycleRecord(event: "didEnterBackground", at: 4))
        #expect(app.acknowledgements == [
            PolicyAcknowledgement(policyVersion: "1", status: .error, at: 7),
            PolicyAcknowledgement(policyVersion: "2", status: .unsupported, at: 6),
        ])
        #expect(app.wipes == [wipe])
        #expect(app.feedback.isEmpty)
        #expect(try reopened.knownApps() == ["com.example.mail", "com.example.notes"])
    }

    @Test func aReaderSeesEachCommittedWriteReadsWhileAWriteIsOpenAndCannotWrite() throws {
        let store = try directory.openStore()
        try store.recordRegistration(appID: "com.example.notes", at: 1, appVersion: "2.0", pid: 10, uid: 1000)
        let reader = try StateStore.openReader(path: directory.databasePath)
        #expect(try reader.app(appID: "com.example.notes")?.registration?.appVersion == "2.0")
        try store.recordRegistration(appID: "com.example.mail", at: 2, appVersion: nil, pid: 11, uid: 1000)
        #expect(try reader.knownApps() == ["com.example.mail", "com.example.notes"])
        // A write transaction held open by another connection does not hold the reader (WAL).
        let writer = try RawDatabase(path: directory.databasePath)
        try writer.execute("BEGIN IMMEDIATE; DELETE FROM registrations")
        #expect(try reader.knownApps() == ["com.example.mail", "com.example.notes"])
        try writer.execute("COMMIT")
        #expect(try reader.knownApps() == [])
        #expect(throws: StoreError.readOnly(path: directory.databasePath)) {
            try reader.recordRegistration(appID: "com.example.notes", at: 3, appVersion: nil, pid: 12, uid: 1000)
        }
    }

    /// A reader that cannot read the write-ahead log must fail, to be opened
    /// again later, never fall back to reading the database file alone (`immutable`): that
    /// ignores every transaction still in the log, then and for as long as it is kept.
    @Test func aReaderThatCannotUseTheLogFailsRatherThanServeTheDatabaseWithoutIt() throws {
        let first = try directory.openStore()
        try first.recordRegistration(appID: "com.example.notes", at: 1, appVersion: nil, pid: 10, uid: 1000)
        first.close()  // the last connection: everything is copied into state.db and the log removed
        let store = try directory.openStore()
        defer { store.close() }
        try store.recordRegistration(appID: "com.example.mail", at: 2, appVersion: nil, pid: 11, uid: 1000)  // in the log only
        let log = directory.databasePath + "-wal"  // out of reach: a directory where it should be
        #expect(rename(log, log + ".aside") == 0 && mkdir(log, 0o700) == 0)

        switch Result(catching: { () throws(StoreError) in try StateStore.openReader(path: directory.databasePath) }) {
        case .success(let reader):
            #expect(try reader.knownApps() == ["com.example.mail", "com.example.notes"], "a reader blind to the log")
            reader.close()
        case .failure(let error):
            #expect(error != .readOnly(path: directory.databasePath))
        }
        #expect(rmdir(log) == 0 && rename(log + ".aside", log) == 0)
        let reader = try StateStore.openReader(path: directory.databasePath)  // the next attempt
        #expect(try reader.knownApps() == ["com.example.mail", "com.example.notes"])
        reader.close()
    }

    @Test func aReaderRefusesADatabaseTheStoreHasNotMigrated() throws {
        try RawDatabase(path: directory.databasePath).execute("CREATE TABLE t (x)")
        #expect(throws: StoreError.self) { try StateStore.openReader(path: directory.databasePath) }
    }

    @Test func feedbackKeepsTheLatestValuePerKey() throws {
        let store = try directory.openStore()
        try store.recordFeedback(appID: "a", key: "sync", severity: .error, message: "failed", data: #"{"code":7}"#, at: 1)
        try store.recordFeedback(appID: "a", key: "login", severity: .info, message: "ok", data: nil, at: 2)
        try store.recordFeedback(appID: "a", key: "sync", severity: .info, message: "recovered", data: nil, at: 3)
        try store.recordFeedback(appID: "b", key: "sync", severity: .error, message: "b's own", data: nil, at: 4)
        #expect(try store.app(appID: "a")?.feedback == [
            FeedbackRecord(key: "login", severity: .info, message: "ok", data: nil, at: 2),
            FeedbackRecord(key: "sync", severity: .info, message: "recovered", data: nil, at: 3),
        ])
        #expect(try store.app(appID: "b")?.feedback.map(\.message) == ["b's own"])
    }

    @Test func feedbackFieldsAreValidatedByName() throws {
        let store = try directory.openStore()
        func record(key: String = "k", message: String = "m", data: String? = nil) throws(StoreError) {
            try store.recordFeedback(appID: "a", key: key, severity: .info, message: message, data: data, at: 1)
        }
        try record(key: String(repeating: "k", count: 100), message: String(repeating: "é", count: 1000))
        #expect(throws: StoreError.invalidField(field: "key", reason: "must be at most 100 characters, got 101")) {
            try record(key: String(repeating: "k", count: 101))
        }
        #expect(throws: StoreError.invalidField(field: "key", reason: "must not be empty")) { try record(key: "") }
        #expect(throws: StoreError.invalidField(field: "message", reason: "must be at most 1000 characters, got 1001")) {
            try record(message: String(repeating: "m", count: 1001))
        }
        // One Character of a letter and 2000 combining marks (4001 bytes) is 2001 characters to the
        // store: counted as Characters, a 1000-character message could hold a whole message's MiB.
        #expect(throws: StoreError.invalidField(field: "message", reason: "must be at most 1000 characters, got 2001")) {
            try record(message: "a" + String(repeating: "\u{301}", count: 2000))
        }
        #expect(throws: StoreError.invalidField(field: "key", reason: "must be at most 100 characters, got 101")) {
            try record(key: "k" + String(repeating: "\u{301}", count: 100))
        }
        #expect(throws: StoreError.invalidField(field: "data", reason: "must be at most 16384 bytes")) {
            try record(data: String(repeating: "d", count: 16 * 1024 + 1))
        }
        #expect(throws: StoreError.invalidField(field: "severity", reason: #"expected "info" or "error", got "warning""#)) {
            try FeedbackSeverity(parsing: "warning")
        }
        #expect(try FeedbackSeverity(parsing: "error") == .error)
        #expect(throws: StoreError.invalidField(field: "status", reason: #"expected "applied", "error" or "unsupported", got "ok""#)) {
            try PolicyAcknowledgementStatus(parsing: "ok")
        }
        #expect(try store.app(appID: "a")?.feedback.count == 1)
    }

    @Test func anAppCannotGrowItsFeedbackKeysWithoutBound() throws {
        var configuration = StateStore.Configuration()
        configuration.feedbackKeysPerApp = 3
        let store = try directory.openStore(configuration: configuration)
        for key in ["a", "b", "c"] {
            try store.recordFeedback(appID: "x", key: key, severity: .info, message: "", data: nil, at: 1)
        }
        #expect(throws: StoreError.limitExceeded(field: "key", limit: 3)) {
            try store.recordFeedback(appID: "x", key: "d", severity: .info, message: "", data: nil, at: 2)
        }
        // Replacing an existing key is still allowed, and other apps have their own budget.
        try store.recordFeedback(appID: "x", key: "b", severity: .error, message: "new", data: nil, at: 3)
        try store.recordFeedback(appID: "y", key: "d", severity: .info, message: "", data: nil, at: 4)
        #expect(try store.app(appID: "x")?.feedback.map(\.key) == ["a", "b", "c"])
    }

    @Test func acknowledgementsAreTrimmedToTheNewestPerApp() throws {
        var configuration = StateStore.Configuration()
        configuration.acknowledgementsPerApp = 2
        let store = try directory.openStore(configuration: configuration)
        for version in 1...4 {
            try store.recordPolicyAcknowledgement(appID: "a", policyVersion: "\(version)", status: .applied, at: Int64(version))
        }
        #expect(try store.app(appID: "a")?.acknowledgements.map(\.policyVersion) == ["4", "3"])
    }

    @Test func registrationAndEventFieldsAreValidated() throws {
        let store = try directory.openStore()
        #expect(throws: StoreError.invalidField(field: "version", reason: "must not be empty")) {
            try store.recordRegistration(appID: "a", at: 1, appVersion: "", pid: 1, uid: 0)
        }
        #expect(throws: StoreError.invalidField(field: "appId", reason: "must be at most 255 characters, got 256")) {
            try store.appendEvents([], lifecycle: [LifecycleUpdate(appID: String(repeating: "a", count: 256), event: "x", at: 1)],
                                   retention: EventRetention(maxCount: 10, maxAge: 1000), now: 1)
        }
        #expect(throws: StoreError.invalidField(field: "event", reason: "must not be empty")) {
            try store.appendEvents([], lifecycle: [LifecycleUpdate(appID: "a", event: "", at: 1)],
                                   retention: EventRetention(maxCount: 10, maxAge: 1000), now: 1)
        }
        #expect(try store.knownApps().isEmpty)
    }
}
