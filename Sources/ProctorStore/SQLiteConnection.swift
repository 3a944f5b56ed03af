import CSQLite
import Glibc

/// A value bound to a statement parameter.
enum SQLValue {
    case integer(Int64)
    case text(String)
    case null

    static func optionalText(_ value: String?) -> SQLValue { value.map(SQLValue.text) ?? .null }
    static func optionalInteger(_ value: Int64?) -> SQLValue { value.map(SQLValue.integer) ?? .null }
}

/// One result row, valid only inside the closure it is handed to.
struct SQLRow {
    fileprivate let statement: OpaquePointer

    func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }

    func optionalInteger(_ column: Int32) -> Int64? {
        sqlite3_column_type(statement, column) == SQLITE_NULL ? nil : integer(column)
    }

    func text(_ column: Int32) -> String { optionalText(column) ?? "" }

    func optionalText(_ column: Int32) -> String? {
        guard let bytes = sqlite3_column_text(statement, column) else { return nil }
        // Read by length, not up to a NUL, so text with embedded NULs round-trips.
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
}

/// One SQLite connection and its cache of prepared statements. Internal to the store:
/// nothing outside `StateStore` touches SQLite. Not thread-safe (opened with
/// `SQLITE_OPEN_NOMUTEX`); the owning `StateStore` is confined to one thread.
final class SQLiteConnection {
    let path: String
    private var handle: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]

    /// How a connection may use its file.
    enum Access {
        /// Read and write, creating the file if needed. SQLite falls back to a read-only
        /// connection by itself when the file exists but cannot be written.
        case readWrite
        /// Read only, through the existing `-wal` and `-shm`: for a database in a directory
        /// nobody can write whose write-ahead log still holds committed transactions.
        case readOnly
        /// Read only, without locks, `-shm` or `-wal` (URI `immutable=1`): for a database in a
        /// directory nobody can write and with no write-ahead log to read.
        case immutable
    }

    /// Opens the database at `path` as `access` says.
    init(path: String, access: Access = .readWrite) throws(StoreError) {
        self.path = path
        var db: OpaquePointer?
        let flags: Int32 = switch access {
        case .readWrite: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        case .readOnly: SQLITE_OPEN_READONLY
        case .immutable: SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
        }
        let name = access == .immutable ? "file:" + Self.uriEscaped(path) + "?immutable=1" : path
        let code = sqlite3_open_v2(name, &db, flags | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE, nil)
        guard code == SQLITE_OK, let db else {
            let errno = db.map { sqlite3_system_errno($0) } ?? 0
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_close_v2(db)
            if errno == EROFS || errno == EACCES { throw .readOnly(path: path) }
            throw .cannotOpen(path: path, message: message)
        }
        handle = db
    }

    deinit { close() }

    /// `path` with the characters that are special in an SQLite URI file name percent-encoded.
    private static func uriEscaped(_ path: String) -> String {
        var escaped = ""
        for character in path {
            switch character {
            case "%": escaped += "%25"
            case "?": escaped += "%3f"
            case "#": escaped += "%23"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// Finalizes every statement and closes the connection. An open transaction is rolled
    /// back by SQLite, exactly as if the process had died.
    func close() {
        for statement in statements.values { sqlite3_finalize(statement) }
        statements.removeAll()
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    /// Closes without letting SQLite checkpoint or delete the `-wal`/`-shm` files, so a
    /// damaged database is kept exactly as found for inspection. (`PERSIST_WAL` alone keeps
    /// the log but still copies its pages into the damaged file on close.)
    func closeKeepingJournalFiles() {
        var persist: Int32 = 1
        sqlite3_file_control(handle, "main", SQLITE_FCNTL_PERSIST_WAL, &persist)
        skipCheckpointOnClose()
        close()
    }

    /// Keeps `close` from checkpointing when this is the last connection to the database.
    func skipCheckpointOnClose() { csqlite_skip_checkpoint_on_close(handle) }

    /// Whether SQLite opened the database read-only (read-only mount or file).
    var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    /// Whether a transaction is open on this connection.
    var inTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes(handle)) }

    func setBusyTimeout(milliseconds: Int32) { sqlite3_busy_timeout(handle, milliseconds) }

    /// Stops SQLite checkpointing the write-ahead log inside this connection's commits (by
    /// default the commit that takes it past 1000 pages does, with its fsyncs).
    func disableAutomaticCheckpoints() { sqlite3_wal_autocheckpoint(handle, 0) }

    /// Calls `observer.committed(frames:)` after each commit of this connection, with the
    /// frames the write-ahead log then holds (`sqlite3_wal_hook`, which the automatic
    /// checkpoint used). Unretained: the observer must outlive the connection, or `close` it first.
    func onCommit(notify observer: WALCheckpointer) {
        sqlite3_wal_hook(handle, { context, _, _, frames in
            Unmanaged<WALCheckpointer>.fromOpaque(context!).takeUnretainedValue().committed(frames: Int(frames))
            return SQLITE_OK
        }, Unmanaged.passUnretained(observer).toOpaque())
    }

    /// A `PASSIVE` checkpoint: copies what it can of the write-ahead log into the database
    /// without waiting for anyone (fsyncing the log first and, when it copied all of it, the
    /// database). Returns the frames in the log and how many of them the database now holds.
    func checkpointPassively() throws(StoreError) -> (frames: Int, checkpointed: Int) {
        var frames: Int32 = 0
        var checkpointed: Int32 = 0
        let code = sqlite3_wal_checkpoint_v2(handle, "main", SQLITE_CHECKPOINT_PASSIVE, &frames, &checkpointed)
        guard code == SQLITE_OK else { throw currentError(code) }
        return (Int(frames), Int(checkpointed))
    }

    /// Runs SQL text that may hold several statements (schema migrations); not cached.
    func executeScript(_ sql: String) throws(StoreError) {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw currentError(code) }
    }

    /// Runs one statement to completion, discarding any rows.
    func run(_ sql: String, _ bindings: [SQLValue] = []) throws(StoreError) {
        _ = try query(sql, bindings) { _ in () }
    }

    /// Runs one statement and maps each result row through `row`.
    func query<T>(_ sql: String, _ bindings: [SQLValue] = [], row: (SQLRow) -> T) throws(StoreError) -> [T] {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (index, value) in bindings.enumerated() {
            try bind(value, at: Int32(index + 1), in: statement)
        }
        var rows: [T] = []
        while true {
            let code = sqlite3_step(statement)
            switch code {
            case SQLITE_ROW: rows.append(row(SQLRow(statement: statement)))
            case SQLITE_DONE: return rows
            default: throw currentError(code)
            }
        }
    }

    /// The statement for `sql`, prepared on first use and reused after that.
    private func prepared(_ sql: String) throws(StoreError) -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else { throw currentError(code) }
        statements[sql] = statement
        return statement
    }

    private func bind(_ value: SQLValue, at index: Int32, in statement: OpaquePointer) throws(StoreError) {
        let code: Int32
        switch value {
        case let .integer(number):
            code = sqlite3_bind_int64(statement, index, number)
        case var .text(string):
            // Bound by length so embedded NULs are kept; SQLite copies the bytes (TRANSIENT),
            // straight from the string's own storage. A nil pointer would bind NULL, not "".
            code = string.withUTF8 { buffer in
                guard let bytes = buffer.baseAddress else { return sqlite3_bind_text(statement, index, "", 0, csqlite_transient()) }
                return bytes.withMemoryRebound(to: CChar.self, capacity: buffer.count) { characters in
                    sqlite3_bind_text(statement, index, characters, Int32(buffer.count), csqlite_transient())
                }
            }
        case .null:
            code = sqlite3_bind_null(statement, index)
        }
        guard code == SQLITE_OK else { throw currentError(code) }
    }

    /// Maps the connection's last error to a `StoreError`, using the OS errno where SQLite
    /// folds several causes into one code (an I/O error that is really ENOSPC or EROFS).
    func currentError(_ code: Int32) -> StoreError {
        let extended = handle.map { sqlite3_extended_errcode($0) } ?? code
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
        let systemErrno = handle.map { sqlite3_system_errno($0) } ?? 0
        switch extended & 0xff {
        case SQLITE_FULL:
            return .storageFull(path: path)
        case SQLITE_READONLY:
            return .readOnly(path: path)
        case SQLITE_CORRUPT, SQLITE_NOTADB:
            return .corrupt(path: path, message: message)
        case SQLITE_BUSY, SQLITE_LOCKED:
            return .busy(path: path)
        case SQLITE_IOERR, SQLITE_CANTOPEN:
            switch systemErrno {
            case ENOSPC, EDQUOT: return .storageFull(path: path)
            case EROFS, EACCES, EPERM: return .readOnly(path: path)
            default: return .io(path: path, message: systemErrno == 0 ? message : "\(message): \(String(cString: strerror(systemErrno)))")
            }
        default:
            return .sqlite(code: extended, message: message)
        }
    }
}
