import CSQLite
import Glibc

/// proctord's durable state: applied policy bundles with history, wipe directives, and the
/// per-app inventory and feedback, in one SQLite database `state.db` inside the state directory.
///
/// All SQLite work of the project happens behind this type. It is **not** thread-safe and
/// not `Sendable`: the daemon creates it and calls it from its single event-loop thread only.
///
/// Guarantees:
/// - Every method that writes runs in one transaction. When it returns normally the change is
///   in the write-ahead log and survives `kill -9`; the writes a client of proctord can make at
///   will (`WriteDurability.unflushed`, each method says) are fsynced by the next checkpoint
///   (`WALCheckpointer`, within a second) or the next flushed write, all others before they
///   return (`synchronous=FULL`), so those survive power loss too. When it throws, nothing of
///   that call was written.
/// - Write failures (full disk, read-only directory, I/O errors) are reported as `StoreError`
///   values; reads of the last committed state keep working.
public final class StateStore {
    /// Limits and timing; the defaults are what proctord uses.
    public struct Configuration: Sendable {
        /// Applied-bundle history entries kept (the newest is the bundle in force). At least 1.
        public var historyLimit: Int = 20
        /// Distinct feedback keys one app may hold; a new key beyond this is refused.
        public var feedbackKeysPerApp: Int = 100
        /// Policy acknowledgements kept per app (the newest ones).
        public var acknowledgementsPerApp: Int = 20
        /// Completed wipe directives kept per app (pending ones are always kept).
        public var completedWipesPerApp: Int = 20
        /// Notifications queued per app for its next registration; one more is refused.
        public var queuedNotificationsPerApp: Int = 100
        /// How long a write waits for another connection's lock before `StoreError.busy`.
        public var busyTimeoutMilliseconds: Int32 = 5000
        /// The write-ahead log is checkpointed once it holds this many pages (SQLite's
        /// automatic checkpoint's default), and at most `checkpointInterval` after any write.
        public var checkpointPages: Int = 1000
        public var checkpointInterval: Duration = .seconds(1)
        /// A log this long (≈ 200 MiB) means a reader keeps it from being checkpointed: the
        /// unflushed writes (what clients make at will) are refused (`.logHeldBack`) until it lets go.
        public var maxUncheckpointedPages: Int = 50_000

        public init() {}
    }

    /// The database file name inside the state directory.
    public static let databaseFileName = "state.db"

    /// Absolute or relative path of `state.db`.
    public let databasePath: String
    /// Set when `open` found a corrupt database, moved it aside and started a fresh one.
    public let recoveredCorruption: CorruptDatabaseRecovery?
    /// Whether `open` found the write-ahead log holding transactions: the last writer did not
    /// close the database (it crashed or was killed), or another connection has it open. SQLite
    /// reads such a log but leaves it as it is, so it may still hold the old bytes of data keys
    /// destroyed since its last checkpoint (`eraseDestroyedDataKeys` erases them).
    public let foundUnclosedLog: Bool
    /// Whether the database could only be opened read-only; every write then throws `.readOnly`.
    public var isReadOnly: Bool { connection.isReadOnly }

    let configuration: Configuration
    let connection: SQLiteConnection
    /// Checkpoints the log off the caller's thread; nil for a reader or a read-only store.
    let checkpointer: WALCheckpointer?
    /// Whether every destroyed data key's bytes were erased (StateStore+DataKeys.swift) since
    /// this store opened, with none destroyed since: a shred with nothing to destroy then
    /// checkpoints nothing, so an app cannot make the loop fsync by asking for one in a loop.
    var destroyedKeysErased = false
    /// How the last write transaction was committed (`WriteDurability`): what tests check.
    private(set) var lastWriteDurability: WriteDurability?
    /// `knownApps()` once read, kept by this connection's writes (StateStore+KnownApps.swift).
    var knownAppLedger: KnownAppLedger?

    private init(connection: SQLiteConnection, configuration: Configuration, recoveredCorruption: CorruptDatabaseRecovery?,
                 foundUnclosedLog: Bool = false, checkpointer: WALCheckpointer? = nil) {
        self.connection = connection
        self.checkpointer = checkpointer
        self.configuration = configuration
        self.databasePath = connection.path
        self.recoveredCorruption = recoveredCorruption
        self.foundUnclosedLog = foundUnclosedLog
    }

    /// Opens `directory/state.db`, creating the directory (mode 0750) and the database if they
    /// do not exist, and migrates an older schema forward in one transaction.
    ///
    /// A corrupt database (SQLite reports `SQLITE_CORRUPT`/`SQLITE_NOTADB` or `quick_check`
    /// fails) is renamed to `state.db.corrupt-<UTC time>` together with its `-wal`/`-shm`,
    /// a fresh database is created, and `recoveredCorruption` says so. Nothing is deleted but
    /// the wrapped data keys, overwritten in the kept files first (`WrappedKeyErasure`): the
    /// fresh store never learns them, so no wipe could destroy them there.
    ///
    /// - Parameter now: the current time, used to name a moved-aside corrupt file.
    /// - Throws: `.schemaTooNew` for a database from a newer build; `.readOnly` when the
    ///   database does not exist (or needs migrating) and cannot be written; `.cannotOpen`,
    ///   `.io`, `.busy` for the rest — a corrupt database whose keys cannot be erased (or that
    ///   cannot be moved aside) among them: it stays where it is, and no fresh one is made.
    public static func open(directory: String, configuration: Configuration = Configuration(),
                            now: UnixMilliseconds = currentTime()) throws(StoreError) -> StateStore {
        precondition(configuration.historyLimit >= 1, "historyLimit must keep the current bundle")
        let path = directory + "/" + databaseFileName
        if mkdir(directory, 0o750) != 0 && errno != EEXIST {
            let code = errno
            if code == EROFS || code == EACCES { throw .readOnly(path: directory) }
            throw .cannotOpen(path: directory, message: String(cString: strerror(code)))
        }
        do throws(StoreError) {
            let foundUnclosedLog = walHoldsTransactions(path)
            let connection = try openAndMigrate(path: path, configuration: configuration)
            return StateStore(connection: connection, configuration: configuration, recoveredCorruption: nil,
                              foundUnclosedLog: foundUnclosedLog,
                              checkpointer: try checkpointing(connection, configuration: configuration))
        } catch .corrupt(_, let reason) {
            // Erased before the move: a start that fails or is killed in between leaves the
            // corrupt state.db where the next start finds it and erases it again.
            var erasedHexRuns = 0
            for suffix in ["", "-wal", "-shm"] { erasedHexRuns += try WrappedKeyErasure.erase(fileAt: path + suffix) }
            let movedTo = try moveAside(path: path, now: now)
            let connection = try openAndMigrate(path: path, configuration: configuration)
            return StateStore(connection: connection, configuration: configuration,
                              recoveredCorruption: CorruptDatabaseRecovery(reason: reason, movedTo: movedTo,
                                                                           erasedHexRuns: erasedHexRuns),
                              checkpointer: try checkpointing(connection, configuration: configuration))
        }
    }

    /// Hands the checkpoints of a writable `connection`'s log to a `WALCheckpointer`.
    private static func checkpointing(_ connection: SQLiteConnection,
                                      configuration: Configuration) throws(StoreError) -> WALCheckpointer? {
        guard !connection.isReadOnly else { return nil }
        let checkpointer = try WALCheckpointer(path: connection.path, configuration: configuration)
        connection.disableAutomaticCheckpoints()
        connection.onCommit(notify: checkpointer)
        return checkpointer
    }

    /// A second, read-only connection to the database at `path` (which `open` created and
    /// migrated), for reads on another thread than the writer's: in WAL mode neither blocks the
    /// other. Through the `-wal` and `-shm`; as an immutable file only when nobody can change
    /// the database (a directory nobody may write, with no write-ahead log, as `open` reads it
    /// then). Any other failure throws, to be tried again: an immutable reader would ignore the
    /// log, serving older state for as long as it is kept. Every write on it throws `.readOnly`.
    public static func openReader(path: String, configuration: Configuration = Configuration()) throws(StoreError) -> StateStore {
        func connect(_ access: SQLiteConnection.Access) throws(StoreError) -> (SQLiteConnection, Int32) {
            let connection = try SQLiteConnection(path: path, access: access)
            connection.setBusyTimeout(milliseconds: configuration.busyTimeoutMilliseconds)
            return (connection, try userVersion(connection))  // the first read: SQLite opens the file lazily
        }
        let (connection, version): (SQLiteConnection, Int32)
        do { (connection, version) = try connect(.readOnly) } catch {
            guard directoryIsReadOnly(path) && !walHoldsTransactions(path) else { throw error }
            (connection, version) = try connect(.immutable)
        }
        guard version == Schema.latestVersion else {
            throw .cannotOpen(path: path, message: "schema version \(version), expected \(Schema.latestVersion): open it with `open` first")
        }
        return StateStore(connection: connection, configuration: configuration, recoveredCorruption: nil)
    }

    /// Closes the database, checkpointing its log (when no other connection has it open).
    /// Any later call on this store is a programmer error.
    public func close() {
        checkpointer?.stop()
        connection.close()
    }

    deinit { close() }

    /// The wall-clock time now, in the store's unit.
    public static func currentTime() -> UnixMilliseconds {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }

    private static func openAndMigrate(path: String, configuration: Configuration) throws(StoreError) -> SQLiteConnection {
        // WAL mode needs a writable directory for its -shm file, even to read. When the
        // directory cannot be written at all, read the database as immutable instead, unless
        // its last writer did not close it (kill -9, or still running): then committed
        // transactions are still in the -wal, which only a plain read-only connection reads,
        // through the -shm that writer left. Immutable would silently serve older state.
        let directoryIsReadOnly = directoryIsReadOnly(path)
        let databaseExists = access(path, F_OK) == 0
        if directoryIsReadOnly && !databaseExists { throw .readOnly(path: path) }
        var connectionAccess = SQLiteConnection.Access.readWrite
        if directoryIsReadOnly {
            let walHoldsTransactions = walHoldsTransactions(path)
            if walHoldsTransactions && access(path + "-shm", R_OK) != 0 {
                throw .cannotOpen(path: path, message: "the directory is read-only and the write-ahead log \(path)-wal "
                    + "cannot be read without its -shm file; make the directory writable once so it can be recovered")
            }
            connectionAccess = walHoldsTransactions ? .readOnly : .immutable
        }
        let connection = try SQLiteConnection(path: path, access: connectionAccess)
        do {
            try prepare(connection, configuration: configuration)
            return connection
        } catch {
            if case .corrupt = error { connection.closeKeepingJournalFiles() }
            throw error
        }
    }

    /// Whether the directory of the database at `path` cannot be written (so no `-wal` or `-shm` can be created).
    private static func directoryIsReadOnly(_ path: String) -> Bool {
        access(String(path.dropLast(databaseFileName.count)), W_OK) != 0
    }

    /// Whether the database at `path` has a non-empty write-ahead log: transactions not yet in the file.
    private static func walHoldsTransactions(_ path: String) -> Bool {
        var walStatus = stat()
        return stat(path + "-wal", &walStatus) == 0 && walStatus.st_size > 0
    }

    /// Sets the connection up (journal mode, sync, checks) and migrates its schema.
    private static func prepare(_ connection: SQLiteConnection, configuration: Configuration) throws(StoreError) {
        let path = connection.path
        connection.setBusyTimeout(milliseconds: configuration.busyTimeoutMilliseconds)
        // The first statements read the header, so a file that is not a database fails here.
        let mode = try connection.query("PRAGMA journal_mode = WAL") { $0.text(0) }.first
        if mode != "wal" && !connection.isReadOnly {
            throw .sqlite(code: SQLITE_ERROR, message: "could not switch \(path) to WAL mode (got \(mode ?? "nothing"))")
        }
        try connection.run("PRAGMA synchronous = FULL")
        // Freed content is zeroed from the first write on, not only in a shred's transaction: a
        // key's row moved by a page split or rewritten by a release leaves its old bytes in free
        // space otherwise, where the shred never looks (DataKeyTests). Debian's SQLite is built
        // with this on; the guarantee should not depend on how SQLite was built.
        try connection.run("PRAGMA secure_delete = ON")
        try connection.run("PRAGMA foreign_keys = ON")
        let problems = try connection.query("PRAGMA quick_check") { $0.text(0) }
        if problems != ["ok"] {
            throw .corrupt(path: path, message: problems.prefix(5).joined(separator: "; "))
        }
        try migrate(connection)
    }

    /// Brings the schema to `Schema.latestVersion` in one transaction, or refuses a newer one.
    private static func migrate(_ connection: SQLiteConnection) throws(StoreError) {
        let found = try userVersion(connection)
        if found > Schema.latestVersion { throw .schemaTooNew(found: found, supported: Schema.latestVersion) }
        if found == Schema.latestVersion { return }
        if connection.isReadOnly { throw .readOnly(path: connection.path) }
        try connection.run("BEGIN IMMEDIATE")
        do throws(StoreError) {
            // Re-read under the write lock: another process may have migrated meanwhile.
            let start = try userVersion(connection)
            if start > Schema.latestVersion { throw StoreError.schemaTooNew(found: start, supported: Schema.latestVersion) }
            for step in Int(start)..<Schema.migrations.count {
                try connection.executeScript(Schema.migrations[step])
            }
            try connection.run("PRAGMA user_version = \(Schema.latestVersion)")
            try connection.run("COMMIT")
        } catch {
            if connection.inTransaction { try? connection.run("ROLLBACK") }
            throw error
        }
    }

    private static func userVersion(_ connection: SQLiteConnection) throws(StoreError) -> Int32 {
        Int32(truncatingIfNeeded: try connection.query("PRAGMA user_version") { $0.integer(0) }.first ?? 0)
    }

    /// Renames `path` and its `-wal`/`-shm` to `path.corrupt-<UTC time>[-n]`, returning the new name.
    private static func moveAside(path: String, now: UnixMilliseconds) throws(StoreError) -> String {
        var seconds = time_t(now / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let stamp = zeroPadded(parts.tm_year + 1900, width: 4) + zeroPadded(parts.tm_mon + 1, width: 2)
            + zeroPadded(parts.tm_mday, width: 2) + "T" + zeroPadded(parts.tm_hour, width: 2)
            + zeroPadded(parts.tm_min, width: 2) + zeroPadded(parts.tm_sec, width: 2) + "Z"
        var target = "\(path).corrupt-\(stamp)"
        var attempt = 1
        while access(target, F_OK) == 0 {
            target = "\(path).corrupt-\(stamp)-\(attempt)"
            attempt += 1
        }
        // The main file first: once it is gone, a leftover -wal can no longer be applied to a fresh database.
        for suffix in ["", "-wal", "-shm"] {
            guard rename(path + suffix, target + suffix) == 0 || errno == ENOENT else {
                let code = errno
                if code == EROFS || code == EACCES { throw .readOnly(path: path) }
                throw .io(path: path, message: "cannot move the corrupt database aside: \(String(cString: strerror(code)))")
            }
        }
        return target
    }

    /// Whether a write's commit waits for the disk.
    enum WriteDurability {
        /// `synchronous=FULL`: fsynced before the write returns; survives power loss.
        case flushed
        /// `synchronous=NORMAL`: in the log, not fsynced: survives a crash of the process, and
        /// power loss once the next checkpoint or flushed write has fsynced the log. For the
        /// writes a client can make at will, which must not make the caller wait on the disk.
        case unflushed
    }

    /// Runs `body` in one write transaction (`BEGIN IMMEDIATE`): either all of it is
    /// committed, as `durability` says, or, on any error, none of it.
    func writeTransaction<T>(_ durability: WriteDurability = .flushed,
                             _ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        if connection.isReadOnly { throw .readOnly(path: databasePath) }
        lastWriteDurability = durability
        guard durability == .unflushed else { return try transaction("BEGIN IMMEDIATE", body) }
        if checkpointer?.logIsFull == true {
            throw .logHeldBack(path: databasePath, pages: configuration.maxUncheckpointedPages)
        }
        try connection.run("PRAGMA synchronous = NORMAL")
        defer { try? connection.run("PRAGMA synchronous = FULL") }
        return try transaction("BEGIN IMMEDIATE", body)
    }

    /// Runs `body`, a checkpoint of this connection's own, while the `WALCheckpointer` is
    /// paused (two checkpoints cannot run at once): waiting for its checkpoint under way, or
    /// returning nil at once if one is and not `waiting`. A log `body` emptied is begun again
    /// here, so that the next write's commit fsyncs no new log header.
    func withCheckpointsPaused<T>(waiting: Bool, _ body: () throws(StoreError) -> T) throws(StoreError) -> T? {
        guard let checkpointer else { return try body() }
        return try checkpointer.paused(waiting: waiting) { () throws(StoreError) -> T in
            let result = try body()
            try? checkpointer.startLog()  // failing, it leaves that fsync to the next write
            return result
        }
    }

    /// Runs `body` in one read transaction, so multi-query reads see a single snapshot.
    func readTransaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try transaction("BEGIN DEFERRED", body)
    }

    private func transaction<T>(_ begin: String, _ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try connection.run(begin)
        do throws(StoreError) {
            let result = try body()
            try connection.run("COMMIT")
            return result
        } catch {
            // A failed COMMIT (disk full) can leave the transaction open; end it so the
            // connection keeps serving the last committed state.
            if connection.inTransaction { try? connection.run("ROLLBACK") }
            throw error
        }
    }
}

/// The store is confined to the daemon's loop thread.
@available(*, unavailable)
extension StateStore: Sendable {}

/// `value` in decimal, left-padded with zeros to `width` digits.
private func zeroPadded(_ value: Int32, width: Int) -> String {
    let digits = String(value)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}
