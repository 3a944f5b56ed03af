/// Everything that can go wrong in the state store, each case specific enough for the daemon
/// to map it to a Varlink error and a log line without parsing text.
public enum StoreError: Error, Equatable, CustomStringConvertible {
    /// `apply(_:expectedVersion:…)` was told to replace `expected`, but `current` is in force
    /// (`nil`: no bundle has been applied yet). Nothing was written.
    case versionConflict(expected: String, current: String?)
    /// A signed bundle's serial is not greater than the highest applied (a replay); nothing written.
    case serialNotNewer(serial: Int64, lastApplied: Int64)
    /// `rollback(to:…)` named a version that is not in the kept history.
    case unknownVersion(String)
    /// No wipe directive with this id exists for this app.
    case unknownWipe(id: String, appID: String)
    /// A caller-supplied value was rejected; `field` names the parameter, `reason` says what was expected.
    case invalidField(field: String, reason: String)
    /// A per-app limit was reached (for example the number of distinct feedback keys).
    case limitExceeded(field: String, limit: Int)
    /// The file system holding the state directory is full; the write was rolled back.
    case storageFull(path: String)
    /// The database or its directory cannot be written (read-only mount, permissions);
    /// reads keep working.
    case readOnly(path: String)
    /// An I/O error from the operating system while reading or writing the database.
    case io(path: String, message: String)
    /// The database file is damaged. `open` recovers from this by moving the file aside;
    /// at run time it is reported so the daemon can reopen the store.
    case corrupt(path: String, message: String)
    /// The database was written by a newer build (its `user_version` is beyond what this one knows).
    case schemaTooNew(found: Int32, supported: Int32)
    /// Another connection held the database lock longer than the busy timeout.
    case busy(path: String)
    /// The write-ahead log holds `pages` pages because a reader keeps it from being
    /// checkpointed: the writes clients make at will are refused until the reader ends
    /// (`StateStore.Configuration.maxUncheckpointedPages`); the flushed ones still go.
    case logHeldBack(path: String, pages: Int)
    /// A shred destroyed data keys, but a reader of the database held a snapshot longer than
    /// the busy timeout (or at all, for a shred that does not wait), so their old bytes could
    /// not be erased from its write-ahead log (nor the database file) yet. Destroyed for every purpose but those bytes: retrying the wipe
    /// finishes the erasure.
    case shredIncomplete(path: String)
    /// The database could not be opened or created at all.
    case cannotOpen(path: String, message: String)
    /// Any other SQLite failure, with its extended result code and message.
    case sqlite(code: Int32, message: String)

    public var description: String {
        switch self {
        case let .versionConflict(expected, current):
            "version conflict: expected \(expected), current is \(current ?? "none")"
        case let .serialNotNewer(serial, lastApplied):
            "serial \(serial) is not greater than the last applied serial \(lastApplied)"
        case let .unknownVersion(version):
            "policy version \(version) is not in the applied history"
        case let .unknownWipe(id, appID):
            "no wipe directive \(id) for app \(appID)"
        case let .invalidField(field, reason):
            "invalid \(field): \(reason)"
        case let .limitExceeded(field, limit):
            "too many \(field) values (limit \(limit))"
        case let .storageFull(path):
            "no space left for the state database \(path)"
        case let .readOnly(path):
            "the state database \(path) is read-only"
        case let .io(path, message):
            "I/O error on the state database \(path): \(message)"
        case let .corrupt(path, message):
            "the state database \(path) is corrupt: \(message)"
        case let .schemaTooNew(found, supported):
            "the state database has schema version \(found), newer than this build supports (\(supported))"
        case let .busy(path):
            "the state database \(path) is locked by another process"
        case let .logHeldBack(path, pages):
            "the write-ahead log of \(path) reached \(pages) pages while a reader keeps it from being checkpointed; "
                + "writes that need no flush are refused until the reader ends"
        case let .shredIncomplete(path):
            "the data keys are destroyed, but a reader of \(path) kept their old bytes from being erased "
                + "from its write-ahead log: the wipe is not complete, retry it"
        case let .cannotOpen(path, message):
            "cannot open the state database \(path): \(message)"
        case let .sqlite(code, message):
            "SQLite error \(code): \(message)"
        }
    }
}
