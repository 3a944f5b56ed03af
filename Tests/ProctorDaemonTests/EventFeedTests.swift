import JSONCore
import ProctorStore
import Testing
@testable import ProctorDaemon

/// The queue in front of the event history's batched write.
@Suite struct EventFeedTests {
    @Test func eventsGetIncreasingIdsAndAWriteIsAskedForOncePerBatch() {
        let feed = EventFeed(lastID: 41)
        var asked = 0
        feed.onFirstPending = { asked += 1 }
        feed.emit(kind: "decision", appID: "a", data: [:])
        feed.emit(kind: "lifecycle", appID: "a", occurredAt: 5, data: ["event": "didBecomeActive"])
        #expect(asked == 1)
        #expect(feed.pending.map(\.id) == [42, 43])
        #expect(feed.pending[1].occurredAt == 5 && feed.pending[1].receivedAt > 5)
        #expect(feed.pending(matching: EventQuery(kinds: ["lifecycle"])).map(\.id) == [43])
        #expect(feed.takePending().count == 2 && feed.pending.isEmpty)
        feed.emit(kind: "policy", appID: nil, data: [:])
        #expect(asked == 2)
        #expect(feed.lastID == 44)
    }

    @Test func aDecisionsDataIsWrittenAsItsDictionaryWouldBe() {
        let cases = [
            DecisionRecord(app: "a", action: "copy", target: "com.example.notes", allowed: false,
                           rule: "apps[\"a\"].clipboard", reason: "clipboard level \"none\" forbids it"),
            DecisionRecord(app: "a", action: "fileExport", target: nil, allowed: true, rule: "", reason: "allowed"),
            DecisionRecord(app: "a", action: "print", target: "/tmp/a\\b\n\u{1}é✓", allowed: false, rule: "r\u{7f}",
                           reason: "tab\there"),
        ]
        for data in cases {
            #expect(data.serialized() == JSONValue.object(data.members).serialized())
            let feed = EventFeed(lastID: 0)
            feed.emitDecision(data, recorded: true)
            let pending = feed.takePending()[0]
            #expect(pending.kind == "decision" && pending.data == data.members)
            #expect(pending.record.data == JSONValue.object(data.members).serializedString())
        }
    }

    /// Events not yet written match a filter as the store's SQL does, by bytes: "\u{212A}it"
    /// (KELVIN SIGN) is canonically equivalent to "Kit" but is not its app id.
    @Test func aPendingEventMatchesAFilterByBytes() {
        let feed = EventFeed(lastID: 0)
        feed.emit(kind: "decision", appID: "io.example.Kit", data: [:])
        #expect(feed.pending(matching: EventQuery(appID: "io.example.\u{212A}it")).isEmpty)
        #expect(feed.pending(matching: EventQuery(appID: "io.example.Kit")).map(\.id) == [1])
    }

    @Test func aFullQueueDropsTheOldestAndCountsThem() {
        let feed = EventFeed(lastID: 0, maxPending: 3)
        for _ in 1...5 { feed.emit(kind: "decision", appID: nil, data: [:]) }
        #expect(feed.pending.map(\.id) == [3, 4, 5])
        #expect(feed.droppedCount == 2)
    }

    /// A queue kept full for many times its bound (a flood of denials the store cannot take
    /// as fast) keeps exactly the newest events, in order, and holds at most half as many
    /// again as the bound while it lets go of the dropped ones in bulk.
    @Test func aQueueKeptFullKeepsTheNewestInOrderAndBoundsWhatItHolds() {
        let feed = EventFeed(lastID: 0, maxPending: 10)
        var asked = 0
        feed.onFirstPending = { asked += 1 }
        for id in 1...137 {
            feed.emit(kind: id % 2 == 0 ? "decision" : "lifecycle", appID: "a", data: [:])
            #expect(feed.pending.map(\.id) == Array(Int64(max(1, id - 9))...Int64(id)))
            #expect(feed.heldCount <= 15)
        }
        #expect(asked == 1)
        #expect(feed.droppedCount == 127)
        #expect(feed.pending(matching: EventQuery(kinds: ["lifecycle"])).map(\.id) == [129, 131, 133, 135, 137])
        let batch = feed.takePending()
        #expect(batch.map(\.id) == Array(128...137))
        #expect(feed.pending.isEmpty && feed.heldCount == 0)
        for _ in 1...3 { feed.emit(kind: "decision", appID: nil, data: [:]) }
        #expect(asked == 2)
        feed.restore(batch)
        #expect(feed.pending.map(\.id) == Array(131...140))
        #expect(feed.droppedCount == 130)
    }

    /// Half the bound waiting asks for a write at once (the 100 ms timer would let a flood of
    /// denials fill the queue and drop them), once per filling.
    @Test func aHalfFullQueueAsksForAWriteOncePerFilling() {
        let feed = EventFeed(lastID: 0, maxPending: 10)
        var asked = 0
        feed.onHalfFull = { asked += 1 }
        for _ in 1...4 { feed.emit(kind: "decision", appID: nil, data: [:]) }
        #expect(asked == 0)
        feed.emit(kind: "decision", appID: nil, data: [:])
        #expect(asked == 1)
        for _ in 1...20 { feed.emit(kind: "decision", appID: nil, data: [:]) }
        #expect(asked == 1, "still full: the write asked for has not taken the queue")
        _ = feed.takePending()
        for _ in 1...5 { feed.emit(kind: "decision", appID: nil, data: [:]) }
        #expect(asked == 2)
        feed.emit(kind: "policy", appID: nil, recorded: false, data: [:])
        #expect(asked == 2 && feed.pending.count == 5, "a streamed-only event is not queued")
    }

    @Test func aFailedBatchGoesBackAheadOfNewerEventsWithinTheBound() {
        let feed = EventFeed(lastID: 0, maxPending: 4)
        var asked = 0
        feed.onFirstPending = { asked += 1 }
        for _ in 1...3 { feed.emit(kind: "decision", appID: nil, data: [:]) }
        let batch = feed.takePending()
        feed.restore(batch)
        #expect(asked == 1, "the caller schedules the retry")
        _ = feed.takePending()
        for _ in 1...2 { feed.emit(kind: "decision", appID: nil, data: [:]) }
        feed.restore(batch)
        #expect(feed.pending.map(\.id) == [2, 3, 4, 5])
        #expect(feed.droppedCount == 1)
    }
}
