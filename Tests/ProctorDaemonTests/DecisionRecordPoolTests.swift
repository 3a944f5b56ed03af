import Foundation
import LinuxIO
import ProctorPolicy
import ProctorStore
import Testing
import TestSupport
@testable import ProctorDaemon

/// The loop fills decision records written to the history again instead of allocating new
/// ones (`DecisionRecord.Pool`).
@Suite struct DecisionRecordPoolTests {
    private let closing = [("SESSION", "s-1"), ("PEER_PID", "42")]

    /// `events` as the history write hands them back: the batch the feed gave it.
    private func written(_ records: [DecisionRecord]) -> [EventFeed.Pending] {
        let feed = EventFeed(lastID: 0)
        for record in records { feed.emitDecision(record, recorded: true) }
        return feed.takePending()
    }

    private func denial(_ pool: DecisionRecord.Pool) -> DecisionRecord {
        pool.make(Decision(allowed: false, rule: #"apps["com.example.notes"].dlp.print"#, reason: "printing is blocked"),
                  app: "com.example.notes", action: "print",
                  target: DecisionRecord.Target(String(repeating: "€", count: 30)),  // past the 64 inline bytes
                  policyVersion: "2026.1", closingFields: closing, logged: true)
    }

    @Test func aRefilledRecordSaysNothingOfItsLastDecision() {
        let pool = DecisionRecord.Pool()
        var first: DecisionRecord? = denial(pool)
        let firstID = ObjectIdentifier(first!)
        pool.recycle(written([first.take()!]))
        #expect(pool.count == 1)

        let again = pool.make(Decision(allowed: true, rule: "builtin.clipboard", reason: "allowed"), app: "a.b",
                              action: "clipboard.copy", target: nil, policyVersion: "", closingFields: [], logged: false)
        #expect(ObjectIdentifier(again) == firstID, "the pooled record was not filled again")
        let fresh = DecisionRecord(app: "a.b", action: "clipboard.copy", target: nil, allowed: true, rule: "builtin.clipboard",
                                   reason: "allowed")
        #expect(again.logContent().message == fresh.logContent().message)
        #expect(again.logContent().fields.map { [$0.0, $0.1] } == fresh.logContent().fields.map { [$0.0, $0.1] })
        #expect(again.serialized() == fresh.serialized())
        #expect(again.members == fresh.members)
        #expect(again.target == nil && again.policyVersion.isEmpty && again.closingFields.isEmpty && !again.isLogged)
    }

    /// The log writer may not have written a denial's line when the history write is done:
    /// a record held elsewhere is neither pooled nor changed.
    @Test func aRecordStillHeldElsewhereIsLeftAlone() {
        let pool = DecisionRecord.Pool()
        let held = denial(pool)
        pool.recycle(written([held]))
        #expect(pool.count == 0)
        let next = denial(pool)
        #expect(next !== held)
        #expect(held.logContent().message == "Denied print for com.example.notes: printing is blocked")
        #expect(held.target == String(repeating: "€", count: 30) && held.closingFields.count == 2)
    }

    /// At most `capacity` and one write's worth: what a write kept and no decision took goes at
    /// the next write, and a write with nothing to write empties the pool.
    @Test func thePoolIsBoundedAndEmptiesWhenIdle() {
        let pool = DecisionRecord.Pool(capacity: 2)
        pool.recycle(written([denial(pool), denial(pool), denial(pool)]))
        #expect(pool.count == 2)

        _ = pool.make(Decision(allowed: false, rule: "r", reason: "no"), app: "a.b", action: "print", target: nil,
                      policyVersion: "", closingFields: [], logged: false)
        weak var left: DecisionRecord?
        do {
            let kept = pool.make(Decision(allowed: false, rule: "r", reason: "no"), app: "a.b", action: "print", target: nil,
                                 policyVersion: "", closingFields: [], logged: false)
            left = kept
            pool.recycle(written([consume kept]))
        }
        #expect(pool.count == 1 && left != nil)
        // The record kept last time was not taken since: freed.
        pool.recycle(written([DecisionRecord(app: "a.b", action: "print", target: nil, allowed: false, rule: "r", reason: "no")]))
        #expect(pool.count == 1 && left == nil)
        pool.recycle([])
        #expect(pool.count == 0)
    }

    /// The daemon's history write pools its denials' records once the log writer is done with
    /// them, writes them as they were, and frees the pool at the next write when nothing came.
    @Test func theHistoryWritePoolsRecordsAndAnIdleWriteFreesThem() throws {
        let directory = try TemporaryDirectory(prefix: "proctor-pool")
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.path + "/config/policy.d", withIntermediateDirectories: true)
        try Data(#"{"schema": 1, "version": "one", "apps": {}}"#.utf8).write(to: directory.appending("config/policy.d/00.json"))
        let daemon = try Daemon.inProcess(.inProcess(directory: directory.path), loop: try EventLoop())
        defer { daemon.closeState() }

        func deny(_ target: String?) {
            guard var target else {
                return daemon.record(Decision(allowed: false, rule: "r1", reason: "no"), app: "a.b", Action.print,
                                     target: nil, uid: 0, closingFields: [])
            }
            target.withUTF8 { daemon.record(Decision(allowed: false, rule: "r2", reason: "never"), app: "c.d",
                                            Action.fileExport, target: $0, uid: 0, closingFields: [("SESSION", "s")]) }
        }
        func writeHistory() {
            daemon.handOffLogBatch()
            daemon.logger.flush()  // the writer drops its references to the records
            daemon.flushEventHistory()
        }
        deny("/tmp/x.pdf")
        writeHistory()
        #expect(daemon.decisionRecords.count == 1)
        #expect(daemon.historyFlushScheduled, "no write comes to free the pool when the daemon goes idle")
        deny(nil)
        #expect(daemon.decisionRecords.count == 0)
        writeHistory()
        let events = try daemon.recordedEvents(matching: EventQuery(kinds: ["decision"]), limit: 10)
        #expect(events.map { $0.data["target"] } == [.string("/tmp/x.pdf"), .null])
        #expect(events.map { $0.data["rule"] } == [.string("r2"), .string("r1")])
        #expect(events.map(\.appId) == ["c.d", "a.b"])
        daemon.flushEventHistory()  // nothing queued: the daemon is idle
        #expect(daemon.decisionRecords.count == 0)
    }
}
