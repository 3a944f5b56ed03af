import Dispatch
import LinuxIO
import Synchronization

/// Checkpoints the store's write-ahead log on a thread of its own, so that the connection of
/// proctord's loop never waits on a disk flush it did not ask for (docs/state.md, "Durability
/// guarantees"). That connection has SQLite's automatic checkpoint off — it ran inside
/// whichever commit took the log past 1000 pages, with two fsyncs — and tells this one the
/// log's length after each commit (`committed(frames:)`).
///
/// A `PASSIVE` checkpoint runs once the log holds `checkpointPages` frames, and at most
/// `checkpointInterval` after any commit: it fsyncs the log (so the writes committed without
/// an fsync are durable from then on), copies it into the database and fsyncs that. Once the
/// log is copied whole, the next write starts it again from its beginning, and SQLite then
/// fsyncs the log's new header inside that write's commit. Here that write is this thread's
/// own (an unchanged `user_version`), never the loop's: a second connection (`logHolder`)
/// holds a read open across the checkpoint, and a held read keeps any other writer from
/// restarting the log (it appends instead) until this thread holds the write lock.
///
/// So checkpoints and restarts of the log are only ever made here, one after the other —
/// which also keeps clear of SQLite's "WAL-reset" race (fixed in 3.51.3, Debian ships 3.40),
/// a checkpoint starting while another connection restarts the log — except the crypto-shred's
/// `wal_checkpoint(TRUNCATE)`, which runs on the loop's connection with this thread paused
/// (`paused(waiting:)`).
final class WALCheckpointer: @unchecked Sendable {
    /// What this thread did, for tests and diagnosis.
    struct Statistics: Equatable {
        /// Checkpoints run, and those that copied the whole log.
        var checkpoints = 0
        var completeCheckpoints = 0
        /// Complete checkpoints followed by this thread's restarting write (which appends
        /// instead when a reader, such as the status document's builder, reads meanwhile).
        var restarts = 0
        /// Checkpoints or restarts that failed (the store's next write error says why).
        var failures = 0
    }

    private struct State {
        /// The log's length after the last commit not yet followed by a checkpoint; nil when none.
        var committedFrames: Int?
        /// The log's length as last known (a commit's, or 1 after this thread began it again).
        var frames = 0
        /// The last checkpoint could not copy the whole log (a reader held it back): try again.
        var incomplete = false
        var runQueued = false
        var timerArmed = false
        var stopped = false
        var statistics = Statistics()
    }

    private let writer: SQLiteConnection
    private let logHolder: SQLiteConnection
    private let pages: Int
    private let maxPages: Int
    private let interval: Duration
    /// Where checkpoints run: a thread of its own that blocks while there is nothing to do (a
    /// Dispatch queue's timer woke an idle proctord every second, `JobThread`).
    private var thread: JobThread?
    /// Held through each checkpoint and restart, and by `paused(waiting:)`.
    private let running = DispatchSemaphore(value: 1)
    private let state = Mutex(State())

    init(path: String, configuration: StateStore.Configuration) throws(StoreError) {
        writer = try SQLiteConnection(path: path)
        logHolder = try SQLiteConnection(path: path)
        pages = configuration.checkpointPages
        maxPages = configuration.maxUncheckpointedPages
        interval = configuration.checkpointInterval
        for connection in [writer, logHolder] {
            connection.setBusyTimeout(milliseconds: configuration.busyTimeoutMilliseconds)
            connection.disableAutomaticCheckpoints()
        }
        // Its checkpoints fsync the log and the database, and its restarts the log's header,
        // at any setting but OFF; its own one-page write needs no fsync of its own.
        try writer.run("PRAGMA synchronous = NORMAL")
        thread = JobThread { [weak self] trigger in self?.run(fromTimer: trigger == .deadline) }
        // Failing (a full disk), it leaves that fsync to the loop's first write: the store still opens.
        try? startLog()
    }

    /// Writes the first frame of an empty log (after a clean stop, or a `TRUNCATE` checkpoint),
    /// on the caller's thread: SQLite fsyncs a new log's header inside the commit that
    /// writes it, which would otherwise be the next write of the loop. A log already begun
    /// gets one page more.
    func startLog() throws(StoreError) {
        try writer.run("BEGIN IMMEDIATE")
        do throws(StoreError) {
            try writePageOne()
            try writer.run("COMMIT")
        } catch {
            if writer.inTransaction { try? writer.run("ROLLBACK") }
            throw error
        }
        noteLogBegun()
    }

    private func noteLogBegun() { state.withLock { $0.frames = min($0.frames, 1) } }

    /// Whether the log holds `maxUncheckpointedPages`: a reader keeps it from being checkpointed
    /// and restarted, and the writes clients make at will are refused until it lets go.
    var logIsFull: Bool { state.withLock { $0.frames >= maxPages } }

    /// Writes page 1 unchanged (an unchanged `user_version`): a write of this connection's own.
    private func writePageOne() throws(StoreError) {
        try writer.run("PRAGMA user_version = \(Schema.latestVersion)")
    }

    var statistics: Statistics { state.withLock { $0.statistics } }

    /// After a commit on the loop's connection, whose log now holds `frames` frames (from its
    /// `sqlite3_wal_hook`, on the loop: takes a lock no one holds for long, and queues work).
    func committed(frames: Int) {
        let (now, later) = state.withLock { state -> (Bool, Bool) in
            guard !state.stopped else { return (false, false) }
            state.committedFrames = frames
            state.frames = frames
            let now = frames >= pages && !state.runQueued
            if now { state.runQueued = true }
            let later = !state.timerArmed
            if later { state.timerArmed = true }
            return (now, later)
        }
        if now { thread?.runSoon() }
        if later { armTimer() }
    }

    private func armTimer() {
        thread?.run(after: interval)
    }

    private func run(fromTimer: Bool) {
        let due = state.withLock { state -> Bool in
            if fromTimer { state.timerArmed = false } else { state.runQueued = false }
            // After a failure, nothing runs before the next commit (`committedFrames`): a restart
            // the loop's connection then made has finished before a checkpoint starts.
            let due = !state.stopped && (state.committedFrames != nil || state.incomplete)
            state.committedFrames = nil
            return due
        }
        guard due else { return }
        running.wait()
        defer { running.signal() }
        guard !state.withLock({ $0.stopped }) else { return }
        var outcome: (complete: Bool, restarted: Bool)?
        do throws(StoreError) { outcome = try checkpointAndRestart() } catch {}
        let retry = state.withLock { state -> Bool in
            state.statistics.checkpoints += 1
            if let outcome {
                if outcome.complete { state.statistics.completeCheckpoints += 1 }
                if outcome.restarted { state.statistics.restarts += 1 }
            } else {
                state.statistics.failures += 1
            }
            state.incomplete = outcome?.complete == false
            let retry = state.incomplete && !state.timerArmed && !state.stopped
            if retry { state.timerArmed = true }
            return retry
        }
        if retry { armTimer() }
    }

    /// One checkpoint, and the log's restart when it copied all of it.
    private func checkpointAndRestart() throws(StoreError) -> (complete: Bool, restarted: Bool) {
        // A read at the log's end, held until this connection holds the write lock: while it
        // is held no connection restarts the log, so the loop's cannot once it is copied whole.
        try logHolder.run("BEGIN")
        defer { if logHolder.inTransaction { try? logHolder.run("COMMIT") } }
        _ = try logHolder.query("SELECT 1 FROM sqlite_schema LIMIT 1") { _ in () }
        let (frames, checkpointed) = try writer.checkpointPassively()
        guard frames > 0, checkpointed == frames else { return (frames == checkpointed, false) }
        try writer.run("BEGIN IMMEDIATE")
        do throws(StoreError) {
            try logHolder.run("COMMIT")
            try writePageOne()  // the first frame of the restarted log, its header fsynced here
            try writer.run("COMMIT")
        } catch {
            if writer.inTransaction { try? writer.run("ROLLBACK") }
            throw error
        }
        noteLogBegun()
        return (true, true)
    }

    /// Runs `body` while no checkpoint of this thread runs (and none holds a read open):
    /// waiting for one under way, or returning nil at once when not `waiting`.
    func paused<T>(waiting: Bool, _ body: () throws(StoreError) -> T) throws(StoreError) -> T? {
        if waiting { running.wait() } else if running.wait(timeout: .now()) == .timedOut { return nil }
        defer { running.signal() }
        return try body()
    }

    /// Waits for the checkpoint under way, if any, and stops: no other one starts. Its
    /// connections close without a checkpoint of their own (the store's close makes it).
    func stop() {
        let first = state.withLock { state -> Bool in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first else { return }
        thread?.stop()
        running.wait()
        defer { running.signal() }
        for connection in [writer, logHolder] {
            connection.skipCheckpointOnClose()
            connection.close()
        }
    }

    /// Waits until the work queued so far (a checkpoint the last commits asked for) is done: for tests.
    func waitForQueuedWork() { thread?.waitUntilIdle() }
}
