import Testing
import TestSupport
@testable import ProctorStore

@Suite struct QueuedNotificationTests {
    let directory: StoreDirectory
    init() throws { directory = try StoreDirectory() }

    @Test func queuedNotificationsSurviveARestartAndAreTakenOnceUnexpiredInOrder() throws {
        let store = try directory.openStore()
        try store.queueNotification(appID: "com.example.notes", payload: #"{"n":1}"#, at: 100, expiresAt: 1_000, byUID: 0)
        try store.queueNotification(appID: "com.example.notes", payload: #"{"n":2}"#, at: 110, expiresAt: 150, byUID: 0)
        try store.queueNotification(appID: "com.example.notes", payload: #"{"n":3}"#, at: 120, expiresAt: 2_000, byUID: 7)
        try store.queueNotification(appID: "com.example.mail", payload: #"{"m":1}"#, at: 130, expiresAt: 2_000, byUID: 0)
        store.close()

        let restarted = try directory.openStore()
        let taken = try restarted.queuedNotifications(appID: "com.example.notes", now: 200)
        #expect(taken.map(\.payload) == [#"{"n":1}"#, #"{"n":3}"#])  // n=2 expired at 150
        #expect(taken.last?.queuedByUID == 7 && taken.last?.expiresAt == 2_000)
        try restarted.removeQueuedNotifications(ids: taken.map(\.id), appID: "com.example.notes", now: 200)
        #expect(try restarted.queuedNotifications(appID: "com.example.notes", now: 0).isEmpty)  // the expired one went too
        #expect(try restarted.queuedNotifications(appID: "com.example.mail", now: 2_000).isEmpty)  // expires at 2000
        #expect(try restarted.queuedNotifications(appID: "com.example.mail", now: 1_999).count == 1)
    }

    @Test func anAppHoldsAtMostTheConfiguredNumberAndPayloadsAreBounded() throws {
        var configuration = StateStore.Configuration()
        configuration.queuedNotificationsPerApp = 2
        let store = try directory.openStore(configuration: configuration)
        for at in [Int64(1), 2] {
            try store.queueNotification(appID: "com.example.notes", payload: "{}", at: at, expiresAt: 10, byUID: 0)
        }
        #expect(throws: StoreError.limitExceeded(field: "payload", limit: 2)) {
            try store.queueNotification(appID: "com.example.notes", payload: "{}", at: 3, expiresAt: 10, byUID: 0)
        }
        // Expired entries make room.
        try store.queueNotification(appID: "com.example.notes", payload: "{}", at: 10, expiresAt: 20, byUID: 0)
        let big = "\"" + String(repeating: "x", count: 64 * 1024) + "\""
        #expect(throws: StoreError.self) {
            try store.queueNotification(appID: "com.example.mail", payload: big, at: 1, expiresAt: 10, byUID: 0)
        }
    }
}
