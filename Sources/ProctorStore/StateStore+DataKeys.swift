/// One generation of an app's data key for one user, as the store keeps it. The key itself is
/// only ever here wrapped (encrypted and bound to app, user and generation) by proctord's
/// machine key; the store knows nothing of the cryptography.
public struct DataKeyRecord: Sendable, Equatable {
    public let appID: String
    public let uid: UInt32
    /// Counts the keys this app and user have had, from 1: a wipe destroys the current one and
    /// the next request creates the next generation.
    public let generation: Int64
    /// The key's public identifier (`SymmetricKey.keyID`), which protected files carry.
    public let keyID: String
    /// The wrapped key; `nil` once destroyed.
    public let wrapped: [UInt8]?
    public let createdAt: UnixMilliseconds
    public let lastReleasedAt: UnixMilliseconds?
    public let destroyedAt: UnixMilliseconds?
}

extension StateStore {
    /// The live (not destroyed) key of `appID` for `uid`, if any.
    public func liveDataKey(appID: String, uid: UInt32) throws(StoreError) -> DataKeyRecord? {
        try connection.query(Self.selectDataKeys + " WHERE app_id = ? AND uid = ? AND destroyed_at IS NULL",
                             [.text(appID), .integer(Int64(uid))], row: Self.dataKeyRecord).first
    }

    /// The generation a new key of `appID` for `uid` gets: one past every earlier one.
    public func nextDataKeyGeneration(appID: String, uid: UInt32) throws(StoreError) -> Int64 {
        let newest = try connection.query("SELECT MAX(generation) FROM data_keys WHERE app_id = ? AND uid = ?",
                                          [.text(appID), .integer(Int64(uid))]) { $0.optionalInteger(0) }.first
        return (newest ?? nil).map { $0 + 1 } ?? 1
    }

    /// Stores a new live key, durably, as created and released at `time`. Fails
    /// (`invalidField`) if `appID` already has a live key for `uid`: one key per app and user.
    /// - Returns: the stored record.
    @discardableResult
    public func insertDataKey(appID: String, uid: UInt32, generation: Int64, keyID: String, wrapped: [UInt8],
                              at time: UnixMilliseconds) throws(StoreError) -> DataKeyRecord {
        try FieldLimit.check(appID, field: "appId", maxCharacters: FieldLimit.appID)
        try writeTransaction { () throws(StoreError) in
            guard try liveDataKey(appID: appID, uid: uid) == nil else {
                throw .invalidField(field: "appId", reason: "\(appID) already has a live data key for uid \(uid)")
            }
            try connection.run("""
                INSERT INTO data_keys (app_id, uid, generation, key_id, wrapped, created_at, last_released_at)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)
                """, [.text(appID), .integer(Int64(uid)), .integer(generation), .text(keyID), .text(Self.hex(wrapped)),
                      .integer(time)])
        }
        return DataKeyRecord(appID: appID, uid: uid, generation: generation, keyID: keyID, wrapped: wrapped, createdAt: time,
                             lastReleasedAt: time, destroyedAt: nil)
    }

    /// Notes that the live key of `appID` for `uid` was handed to the app at `time`.
    public func markDataKeyReleased(appID: String, uid: UInt32, at time: UnixMilliseconds) throws(StoreError) {
        try writeTransaction { () throws(StoreError) in
            try connection.run("UPDATE data_keys SET last_released_at = ? WHERE app_id = ? AND uid = ? AND destroyed_at IS NULL",
                               [.integer(time), .text(appID), .integer(Int64(uid))])
        }
    }

    /// Destroys every live key of `appID` — of every user, or of `uid` alone, and with
    /// `throughGeneration` only generations up to it (a shred redone after a restart condemns the
    /// keys live when it was decided, never one made since): the wrapped bytes
    /// are overwritten in the database file (`secure_delete`, on from open) and the write-ahead log, which held
    /// them too, is checkpointed and truncated, so when this returns the key is gone from the disk
    /// as SQLite sees it. The rows stay, with `destroyedAt`, for the administrator.
    ///
    /// A reader (`openReader`) whose read holds a snapshot older than this write keeps the log
    /// from being copied and emptied: the checkpoint waits for it up to the busy timeout, then
    /// this throws `.shredIncomplete` — the keys are destroyed (never released again) but their
    /// old bytes may still be in the files. The checkpoint runs again whenever the app has a
    /// destroyed key (of `uid`, if given) and no erasure has completed since this store opened
    /// (or since a key was last destroyed), so calling again (a retried wipe, even after a
    /// restart) finishes the erasure when nothing is left to destroy. Without
    /// `waitingForReaders` it throws at once instead (`eraseDestroyedDataKeys`).
    /// - Returns: how many keys were destroyed.
    @discardableResult
    public func destroyDataKeys(appID: String, uid: UInt32? = nil, throughGeneration: Int64? = nil, at time: UnixMilliseconds,
                                waitingForReaders: Bool = true) throws(StoreError) -> Int {
        var condition = "app_id = ? AND destroyed_at IS NULL"
        var values: [SQLValue] = [.integer(time), .text(appID)]
        if let uid { (condition, values) = (condition + " AND uid = ?", values + [.integer(Int64(uid))]) }
        if let throughGeneration { (condition, values) = (condition + " AND generation <= ?", values + [.integer(throughGeneration)]) }
        let destroyed = try writeTransaction { () throws(StoreError) -> Int in
            try connection.run("UPDATE data_keys SET wrapped = NULL, destroyed_at = ? WHERE \(condition)", values)
            return connection.changes
        }
        if destroyed > 0 { destroyedKeysErased = false }
        if destroyed == 0, destroyedKeysErased { return 0 }
        if destroyed == 0, try !hasDestroyedDataKey(appID: appID, uid: uid) { return 0 }
        try eraseDestroyedDataKeys(waitingForReaders: waitingForReaders)
        return destroyed
    }

    /// Finishes the erasure of keys already destroyed (a shred that threw `.shredIncomplete`)
    /// without destroying any other: the write-ahead log is checkpointed and truncated.
    /// Throws `.shredIncomplete` again while a reader still holds it back — at once when not
    /// `waitingForReaders`, else after the busy timeout: a caller on proctord's loop that
    /// retries anyway must not stop it answering for seconds.
    public func eraseDestroyedDataKeys(waitingForReaders: Bool = true) throws(StoreError) {
        if !waitingForReaders { connection.setBusyTimeout(milliseconds: 0) }
        defer { if !waitingForReaders { connection.setBusyTimeout(milliseconds: configuration.busyTimeoutMilliseconds) } }
        // Copies every page into the database (overwriting the old ones) and empties the log.
        // Its row is (busy, frames in the log, frames copied); busy means it did not complete.
        let busy = try withCheckpointsPaused(waiting: waitingForReaders) { () throws(StoreError) in
            try connection.query("PRAGMA wal_checkpoint(TRUNCATE)") { $0.integer(0) }.first ?? 0
        }
        if busy != 0 { throw .shredIncomplete(path: databasePath) }
        destroyedKeysErased = true
    }

    /// Whether a destroyed key exists — of `appID` and of `uid`, when given: one whose old bytes
    /// a checkpoint erases (a shred repeats it; a start after an unclean stop runs it).
    public func hasDestroyedDataKey(appID: String? = nil, uid: UInt32? = nil) throws(StoreError) -> Bool {
        var condition = "destroyed_at IS NOT NULL"
        var values: [SQLValue] = []
        if let appID { (condition, values) = (condition + " AND app_id = ?", values + [.text(appID)]) }
        if let uid { (condition, values) = (condition + " AND uid = ?", values + [.integer(Int64(uid))]) }
        return try !connection.query("SELECT 1 FROM data_keys WHERE \(condition) LIMIT 1", values) { $0.integer(0) }.isEmpty
    }

    /// The apps that hold at least one live key.
    public func appsWithLiveDataKeys() throws(StoreError) -> Set<String> {
        Set(try connection.query("SELECT DISTINCT app_id FROM data_keys WHERE destroyed_at IS NULL", []) { $0.text(0) })
    }

    /// Every key generation of `appID`, by user, newest first.
    public func dataKeys(appID: String) throws(StoreError) -> [DataKeyRecord] {
        try connection.query(Self.selectDataKeys + " WHERE app_id = ? ORDER BY uid, generation DESC", [.text(appID)],
                             row: Self.dataKeyRecord)
    }

    private static let selectDataKeys =
        "SELECT app_id, uid, generation, key_id, wrapped, created_at, last_released_at, destroyed_at FROM data_keys"

    private static func dataKeyRecord(_ row: SQLRow) -> DataKeyRecord {
        DataKeyRecord(appID: row.text(0), uid: UInt32(truncatingIfNeeded: row.integer(1)), generation: row.integer(2),
                      keyID: row.text(3), wrapped: row.optionalText(4).map(bytes(fromHex:)), createdAt: row.integer(5),
                      lastReleasedAt: row.optionalInteger(6), destroyedAt: row.optionalInteger(7))
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xf)]] }, as: UTF8.self)
    }

    /// The bytes of lower-case hex written by `hex`; the store wrote it, so it is well formed
    /// (a damaged value simply fails to unwrap).
    private static func bytes(fromHex text: String) -> [UInt8] {
        let nibbles = text.utf8.map { UInt8($0 >= 0x61 ? $0 - 0x61 + 10 : $0 &- 0x30) & 0xf }
        return stride(from: 0, to: nibbles.count - 1, by: 2).map { nibbles[$0] << 4 | nibbles[$0 + 1] }
    }
}
