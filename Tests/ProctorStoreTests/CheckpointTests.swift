import Glibc
import Testing
import TestSupport
@testable import ProctorStore

/// Which writes wait for the disk, and the write-ahead log's checkpoints on a thread of their
/// own (`WALCheckpointer`): the store's own connection never checkpoints or restarts the log.
@Suite struct CheckpointTests {
    let directory: StoreDirectory
    init() throws { directory = try StoreDirectory() }

    /// The writes a client of proctord can make at will are unflushed; what must survive a
    /// power cut (an applied policy, a rollback, a wipe and its acknowledgement, a data key and
    /// its destruction, an administrator's notification) is flushed. Either way the store's
    /// connection is back at `synchronous=FULL` afterwards.
    @Test func eachWriteIsFlushedOrNotAsItsDataDeserves() throws {
        let store = try directory.openStore()
        func durability(_ write: () throws -> Void) throws -> StateStore.WriteDurability? {
            try write()
            #expect(try store.connection.query("PRAGMA synchronous") { $0.integer(0) } == [2])
            return store.lastWriteDurability
        }
        let pin = IdentityPin(bootID: "b", pid: 1, startTime: 2, executable: "/bin/true", device: 3, inode: 4)
        #expect(try durability { try store.recordRegistration(appID: "a", at: 1, appVersion: "1", pid: 1, uid: 0) } == .unflushed)
        #expect(try durability { try store.recordFeedback(appID: "a", key: "k", severity: .info, message: "", data: nil, at: 1) }
            == .unflushed)
        #expect(try durability { try store.recordPolicyAcknowledgement(appID: "a", policyVersion: "v", status: .applied, at: 1) }
            == .unflushed)
        #expect(try durability { try store.recordIdentityPin(pin, at: 1) } == .unflushed)
        #expect(try durability { try store.removeIdentityPins([pin]) } == .unflushed)
        #expect(try durability {
            try store.appendEvents([], lifecycle: [], retention: EventRetention(maxCount: 10, maxAge: 10), now: 1)
        } == .unflushed)
        let wipe = try store.issueWipe(appID: "a", issuedAt: 1, byUID: 0)
        #expect(store.lastWriteDurability == .flushed)
        #expect(try durability { try store.markDelivered(id: wipe.id, at: 2) } == .unflushed)
        #expect(try durability { try store.acknowledgeWipe(id: wipe.id, appID: "a", at: 3) } == .flushed)
        #expect(try durability { _ = try store.apply(version: "v1", canonicalJSON: policyText("v1"), expectedVersion: nil, at: 1, byUID: 0) }
            == .flushed)
        #expect(try durability { _ = try store.rollback(to: "v1", at: 2, byUID: 0) } == .flushed)
        #expect(try durability { try store.insertDataKey(appID: "a", uid: 0, generation: 1, keyID: "id", wrapped: [1, 2], at: 1) }
            == .flushed)
        #expect(try durability { try store.destroyDataKeys(appID: "a", at: 2) } == .flushed)
        #expect(try durability { _ = try store.queueNotification(appID: "a", payload: "{}", at: 1, expiresAt: 10, byUID: 0) } == .flushed)
    }

    /// Each time the log reaches `checkpointPages`, the checkpoint thread copies it into the
    /// database and restarts it with a write of its own: written one feedback at a time, the
    /// log never grows past that plus one write's pages. And everything written is there.
    @Test func theLogIsCheckpointedAndRestartedByTheCheckpointThread() throws {
        let (store, checkpointer) = try openStore(checkpointingEvery: 40)
        let data = String(repeating: "x", count: 12_000)  // three pages of overflow and more
        for i in 0..<200 {
            try store.recordFeedback(appID: "a", key: "k\(i % 50)", severity: .info, message: "\(i)", data: data, at: Int64(i))
            checkpointer.waitForQueuedWork()
            #expect(walFrames() <= 40 + 8, "write \(i)")
        }
        let statistics = checkpointer.statistics
        #expect(statistics.restarts >= 10 && statistics.restarts == statistics.completeCheckpoints && statistics.failures == 0)
        #expect(try store.app(appID: "a")?.feedback.count == 50)
        #expect(try store.app(appID: "a")?.feedback.first { $0.key == "k49" }?.message == "199")
    }

    /// A reader holding an old snapshot keeps the checkpoint from copying the whole log (and
    /// from restarting it); once it lets go, the next checkpoint completes and restarts it.
    @Test func aReaderHoldsTheLogBackOnlyWhileItReads() throws {
        let (store, checkpointer) = try openStore(checkpointingEvery: 20)
        let data = String(repeating: "y", count: 12_000)
        try store.recordFeedback(appID: "a", key: "first", severity: .info, message: "", data: nil, at: 0)
        checkpointer.waitForQueuedWork()  // the schema's pages may have filled the log already
        let before = checkpointer.statistics
        let reader = try RawDatabase(path: directory.databasePath)
        try reader.execute("BEGIN")
        _ = try reader.integer("SELECT count(*) FROM feedback")
        for i in 0..<30 {
            try store.recordFeedback(appID: "a", key: "k\(i)", severity: .info, message: "", data: data, at: Int64(i))
            checkpointer.waitForQueuedWork()
        }
        let held = checkpointer.statistics
        #expect(held.checkpoints > before.checkpoints && held.restarts == before.restarts && walFrames() > 100)
        try reader.execute("COMMIT")
        try store.recordFeedback(appID: "a", key: "last", severity: .info, message: "", data: nil, at: 99)
        checkpointer.waitForQueuedWork()
        #expect(checkpointer.statistics.restarts == before.restarts + 1)
        #expect(try store.app(appID: "a")?.feedback.count == 32)
    }

    /// While a reader holds the log back, the writes clients make at will grow it up to
    /// `maxUncheckpointedPages` and are then refused (`.logHeldBack`); the flushed ones still go, and
    /// once the reader lets go a checkpoint restarts the log and the others are taken again.
    @Test func aLogAReaderHoldsBackIsBoundedForTheWritesClientsMakeAtWill() throws {
        let (store, checkpointer) = try openStore(checkpointingEvery: 20, refusingFrom: 60)
        let data = String(repeating: "w", count: 12_000)
        let reader = try RawDatabase(path: directory.databasePath)
        try reader.execute("BEGIN")
        _ = try reader.integer("SELECT count(*) FROM feedback")
        var refused: StoreError?
        for i in 0..<100 where refused == nil {
            do throws(StoreError) {
                try store.recordFeedback(appID: "a", key: "k\(i)", severity: .info, message: "", data: data, at: Int64(i))
            } catch { refused = error }
            checkpointer.waitForQueuedWork()
        }
        #expect(refused == .logHeldBack(path: directory.databasePath, pages: 60))
        #expect(walFrames() < 60 + 8)
        _ = try store.issueWipe(appID: "a", issuedAt: 1, byUID: 0)  // flushed: taken
        try reader.execute("COMMIT")
        _ = try store.issueWipe(appID: "a", issuedAt: 2, byUID: 0)  // its commit asks for the checkpoint
        checkpointer.waitForQueuedWork()
        try store.recordFeedback(appID: "a", key: "after", severity: .info, message: "", data: nil, at: 200)
    }

    /// A shred with nothing to destroy checkpoints (and so fsyncs) only while an erasure is
    /// unfinished: an app registering a violating version in a loop, each time a shred of its
    /// keys, once destroyed, makes no `TRUNCATE` checkpoint after the first. (Before, each one
    /// emptied the log again, with two fsyncs on the loop.)
    @Test func aShredWithNothingToDestroyCheckpointsOnlyWhileAnErasureIsUnfinished() throws {
        let store = try directory.openStore()
        try store.insertDataKey(appID: "a", uid: 0, generation: 1, keyID: "id", wrapped: [1, 2, 3], at: 1)
        #expect(try store.destroyDataKeys(appID: "a", at: 2) == 1)
        let data = String(repeating: "z", count: 12_000)
        try store.recordFeedback(appID: "a", key: "k", severity: .info, message: "", data: data, at: 3)
        let written = walFrames()
        #expect(written > 2)
        #expect(try store.destroyDataKeys(appID: "a", uid: 0, at: 4) == 0)
        #expect(walFrames() == written, "the log was checkpointed and truncated again")
        store.close()
        // After a restart it is not known whether the erasure finished: the first shred checkpoints again.
        let reopened = try directory.openStore()
        try reopened.recordFeedback(appID: "a", key: "k2", severity: .info, message: "", data: data, at: 5)
        #expect(walFrames() > 2)
        #expect(try reopened.destroyDataKeys(appID: "a", at: 6) == 0)
        #expect(walFrames() <= 1)
    }

    /// A store whose log is checkpointed every `pages` pages (and not by the clock), with its
    /// checkpointer; unflushed writes are refused from `maxPages`.
    private func openStore(checkpointingEvery pages: Int,
                           refusingFrom maxPages: Int = StateStore.Configuration().maxUncheckpointedPages) throws -> (StateStore, WALCheckpointer) {
        var configuration = StateStore.Configuration()
        configuration.checkpointPages = pages
        configuration.maxUncheckpointedPages = maxPages
        configuration.checkpointInterval = .seconds(3600)
        let store = try directory.openStore(configuration: configuration)
        return (store, try #require(store.checkpointer))
    }

    /// The frames the `-wal` file has room for (its length; a restarted log reuses it).
    private func walFrames() -> Int {
        var status = stat()
        guard stat(directory.databasePath + "-wal", &status) == 0 else { return 0 }
        return max(0, (Int(status.st_size) - 32) / (4096 + 24))
    }
}
