import Testing
import TestSupport
@testable import ProctorStore

/// `knownAppCount()` and `knownApps(from:)` against the query they stand in for: after every
/// kind of write that names an app, the count from memory equals `knownApps()`'s.
@Suite struct KnownAppsTests {
    let directory: StoreDirectory
    init() throws { directory = try StoreDirectory() }

    private static let retention = EventRetention(maxCount: 10, maxAge: 1000)

    @Test func everyWriteThatNamesAnAppIsCountedOnceAndInOrder() throws {
        let store = try directory.openStore()
        // Written before the first count: the read finds it.
        try store.recordRegistration(appID: "com.example.first", at: 1, appVersion: nil, pid: 1, uid: 0)
        #expect(try store.knownAppCount() == 1)

        let writes: [(String, (String) throws -> Void)] = [
            ("registration", { try store.recordRegistration(appID: $0, at: 2, appVersion: "1.0", pid: 2, uid: 1000) }),
            ("lifecycle", { try store.appendEvents([], lifecycle: [LifecycleUpdate(appID: $0, event: "didFinishLaunching", at: 3)],
                                                    retention: Self.retention, now: 3) }),
            ("feedback", { try store.recordFeedback(appID: $0, key: "k", severity: .info, message: "", data: nil, at: 4) }),
            ("acknowledgement", { try store.recordPolicyAcknowledgement(appID: $0, policyVersion: "1", status: .applied, at: 5) }),
            ("wipe", { _ = try store.issueWipe(appID: $0, issuedAt: 6, byUID: 0) }),
        ]
        var expected = ["com.example.first"]
        for (kind, write) in writes {
            let appID = "com.example.\(kind)"
            try write(appID)
            expected.append(appID)
            #expect(try store.knownAppCount() == expected.count, "after a \(kind)")
            #expect(Array(try store.knownApps(from: expected.count - 1)) == [appID], "after a \(kind)")
            // The same app again, by every kind of write: still one.
            for (_, again) in writes { try again(appID) }
            #expect(try store.knownAppCount() == expected.count, "after repeating a \(kind)")
            #expect(try store.knownApps().count == expected.count)
        }
        #expect(Array(try store.knownApps(from: 0)) == expected)
        #expect(try store.knownApps(from: expected.count).isEmpty)
        store.close()

        let reopened = try directory.openStore()
        #expect(try reopened.knownAppCount() == expected.count)
        #expect(Array(try reopened.knownApps(from: 0)) == expected.sorted())
    }

    @Test func aWriteThatFailsCountsNothing() throws {
        var configuration = StateStore.Configuration()
        configuration.busyTimeoutMilliseconds = 50
        let store = try directory.openStore(configuration: configuration)
        #expect(try store.knownAppCount() == 0)
        let writer = try RawDatabase(path: directory.databasePath)
        defer { writer.close() }
        try writer.execute("BEGIN IMMEDIATE")
        #expect(throws: StoreError.busy(path: directory.databasePath)) {
            try store.recordRegistration(appID: "com.example.notes", at: 1, appVersion: nil, pid: 1, uid: 0)
        }
        #expect(throws: StoreError.busy(path: directory.databasePath)) {
            try store.appendEvents([], lifecycle: [LifecycleUpdate(appID: "com.example.mail", event: "didFinishLaunching", at: 2)],
                                   retention: Self.retention, now: 2)
        }
        try writer.execute("COMMIT")
        #expect(try store.knownAppCount() == 0)
        #expect(try store.knownApps().isEmpty)
    }

    @Test func appIDsAreTheirBytesAsSQLiteComparesThem() throws {
        let store = try directory.openStore()
        #expect(try store.knownAppCount() == 0)
        // KELVIN SIGN and "K" are one Character to Swift's `==`, two ids to SQLite.
        try store.recordRegistration(appID: "com.example.K", at: 1, appVersion: nil, pid: 1, uid: 0)
        try store.recordRegistration(appID: "com.example.\u{212A}", at: 2, appVersion: nil, pid: 1, uid: 0)
        #expect(try store.knownApps().count == 2)
        #expect(try store.knownAppCount() == 2)
    }
}
