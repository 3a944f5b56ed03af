import Testing
import TestSupport
@testable import ProctorStore

/// The event history table: batches, queries, retention by count and by age.
@Suite struct EventHistoryTests {
    let directory: StoreDirectory
    init() throws { directory = try StoreDirectory() }

    static func event(_ id: Int64, at time: Int64, kind: String = "decision", app: String? = "a") -> EventRecord {
        EventRecord(id: id, occurredAt: time, receivedAt: time, kind: kind, appID: app, data: #"{"n":\#(id)}"#)
    }

    @Test func batchesAreQueriedByAppKindTimeAndIdAndSurviveAReopen() throws {
        let retention = EventRetention(maxCount: 100, maxAge: 1_000_000)
        var store = try directory.openStore()
        #expect(try store.lastEventID() == 0)
        try store.appendEvents([Self.event(1, at: 10), Self.event(2, at: 20, kind: "lifecycle"), Self.event(3, at: 30, app: "b")],
                               lifecycle: [], retention: retention, now: 30)
        try store.appendEvents([Self.event(4, at: 40, app: nil), Self.event(5, at: 50)], lifecycle: [], retention: retention, now: 50)
        store.close()
        store = try directory.openStore()
        #expect(try store.lastEventID() == 5)
        #expect(try store.events(matching: EventQuery(), limit: 10).map(\.id) == [1, 2, 3, 4, 5])
        #expect(try store.events(matching: EventQuery(), limit: 2).map(\.id) == [4, 5])
        #expect(try store.events(matching: EventQuery(appID: "a"), limit: 10).map(\.id) == [1, 2, 5])
        #expect(try store.events(matching: EventQuery(kinds: ["lifecycle", "nothing"]), limit: 10).map(\.id) == [2])
        #expect(try store.events(matching: EventQuery(since: 20, until: 40), limit: 10).map(\.id) == [2, 3])
        #expect(try store.events(matching: EventQuery(afterID: 3), limit: 10) == [Self.event(4, at: 40, app: nil), Self.event(5, at: 50)])
        #expect(EventQuery(appID: "a", kinds: ["decision"], since: 10, until: 11, afterID: 0)
            .matches(id: 1, occurredAt: 10, kind: "decision", appID: "a"))
        #expect(!EventQuery(until: 10).matches(id: 1, occurredAt: 10, kind: "decision", appID: "a"))
    }

    /// A batch is written 32, 16 … 1 rows per statement: every event of a 71-event batch
    /// (32 + 32 + 4 + 2 + 1) is stored as given, in order, and a duplicate id in its last
    /// statement still writes none of them.
    @Test func aLargeBatchIsStoredWholeOrNotAtAll() throws {
        let store = try directory.openStore()
        let retention = EventRetention(maxCount: 1000, maxAge: 1_000_000)
        let batch = (1...71).map { Self.event($0, at: $0, kind: $0 % 3 == 0 ? "lifecycle" : "decision", app: $0 % 5 == 0 ? nil : "a\($0)") }
        #expect(throws: StoreError.self) {
            try store.appendEvents(batch + [Self.event(70, at: 72)], lifecycle: [], retention: retention, now: 72)
        }
        #expect(try store.events(matching: EventQuery(), limit: 1000).isEmpty)
        try store.appendEvents(batch, lifecycle: [], retention: retention, now: 71)
        #expect(try store.events(matching: EventQuery(), limit: 1000) == batch)
        #expect(try store.lastEventID() == 71)
        // Empty text is bound as "", not NULL (`data` is NOT NULL).
        let empty = EventRecord(id: 72, occurredAt: 72, receivedAt: 72, kind: "", appID: "", data: "")
        try store.appendEvents([empty], lifecycle: [], retention: retention, now: 72)
        #expect(try store.events(matching: EventQuery(afterID: 71), limit: 10) == [empty])
        #expect(StateStore.eventInsertRows(for: 71) == 32 && StateStore.eventInsertRows(for: 7) == 4
                && StateStore.eventInsertRows(for: 1) == 1)
    }

    @Test func retentionPrunesBeyondTheCountAndTheAgeAndIdsAreNeverReused() throws {
        let store = try directory.openStore()
        let byCount = EventRetention(maxCount: 3, maxAge: 1_000_000)
        try store.appendEvents((1...5).map { Self.event($0, at: $0 * 10) }, lifecycle: [], retention: byCount, now: 50)
        #expect(try store.events(matching: EventQuery(), limit: 10).map(\.id) == [3, 4, 5])
        // Received before now - maxAge: gone, whatever the count allows.
        try store.appendEvents([Self.event(6, at: 1000)], lifecycle: [], retention: EventRetention(maxCount: 100, maxAge: 955),
                               now: 1000)
        #expect(try store.events(matching: EventQuery(), limit: 10).map(\.id) == [5, 6])
        try store.appendEvents([], lifecycle: [], retention: EventRetention(maxCount: 100, maxAge: 1), now: 5000)
        #expect(try store.events(matching: EventQuery(), limit: 10).isEmpty)
        #expect(try store.lastEventID() == 6)
    }

    @Test func aBatchIsOneTransaction() throws {
        let store = try directory.openStore()
        let retention = EventRetention(maxCount: 100, maxAge: 1_000_000)
        try store.appendEvents([Self.event(1, at: 1)], lifecycle: [], retention: retention, now: 1)
        // The second row repeats id 1: the whole batch, lifecycle update included, is refused.
        #expect(throws: StoreError.self) {
            try store.appendEvents([Self.event(2, at: 2), Self.event(1, at: 2)],
                                   lifecycle: [LifecycleUpdate(appID: "a", event: "didBecomeActive", at: 2)],
                                   retention: retention, now: 2)
        }
        #expect(try store.events(matching: EventQuery(), limit: 10).map(\.id) == [1])
        #expect(try store.app(appID: "a") == nil)
        // And the connection is back to fsyncing every other write.
        #expect(try store.connection.query("PRAGMA synchronous") { $0.integer(0) } == [2])
    }
}
