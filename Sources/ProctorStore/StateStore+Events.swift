import JSONCore

/// One recorded event of the daemon's history (`Admin.EventHistory`).
public struct EventRecord: Sendable, Equatable {
    /// Given by the daemon, increasing in the order it received events.
    public let id: Int64
    public let occurredAt: UnixMilliseconds
    public let receivedAt: UnixMilliseconds
    public let kind: String
    public let appID: String?
    /// The event's data as JSON text.
    public let data: String

    public init(id: Int64, occurredAt: UnixMilliseconds, receivedAt: UnixMilliseconds, kind: String, appID: String?,
                data: String) {
        self.id = id
        self.occurredAt = occurredAt
        self.receivedAt = receivedAt
        self.kind = kind
        self.appID = appID
        self.data = data
    }
}

/// Which recorded events to read: all of them when every field is nil.
public struct EventQuery: Sendable, Equatable {
    public var appID: String?
    public var kinds: [String]?
    /// Occurred at or after.
    public var since: UnixMilliseconds?
    /// Occurred before.
    public var until: UnixMilliseconds?
    /// Ids above this one.
    public var afterID: Int64?

    public init(appID: String? = nil, kinds: [String]? = nil, since: UnixMilliseconds? = nil, until: UnixMilliseconds? = nil,
                afterID: Int64? = nil) {
        self.appID = appID
        self.kinds = kinds
        self.since = since
        self.until = until
        self.afterID = afterID
    }

    /// Whether an event is one this query reads (for events not yet written). By bytes, as
    /// SQLite compares: `String`'s `==` takes "\u{212A}" (KELVIN SIGN) for "K".
    public func matches(id: Int64, occurredAt: UnixMilliseconds, kind: String, appID: String?) -> Bool {
        (self.appID.map { wanted in appID?.hasSameBytes(as: wanted) == true } ?? true)
            && (kinds?.contains { $0.hasSameBytes(as: kind) } ?? true)
            && (since.map { occurredAt >= $0 } ?? true) && (until.map { occurredAt < $0 } ?? true)
            && (afterID.map { id > $0 } ?? true)
    }
}

/// How much event history to keep: at most `maxCount` events, none received before `maxAge`
/// milliseconds ago; whichever leaves fewer.
public struct EventRetention: Sendable, Equatable {
    public var maxCount: Int
    public var maxAge: UnixMilliseconds

    public init(maxCount: Int, maxAge: UnixMilliseconds) {
        self.maxCount = maxCount
        self.maxAge = maxAge
    }
}

/// An app's latest lifecycle event, kept apart from the history (`GetApp`'s `lastEvent`).
public struct LifecycleUpdate: Sendable, Equatable {
    public let appID: String
    public let event: String
    public let at: UnixMilliseconds

    public init(appID: String, event: String, at: UnixMilliseconds) {
        self.appID = appID
        self.event = event
        self.at = at
    }
}

extension StateStore {
    /// Appends `events` to the history, records the apps' latest lifecycle events and prunes
    /// what `retention` no longer keeps, in one transaction **without an fsync**
    /// (`WriteDurability.unflushed`): a crash of the process loses none of it, a power loss
    /// may lose it back to the last fsync of the log (a checkpoint, within a second, or a
    /// flushed write).
    public func appendEvents(_ events: [EventRecord], lifecycle: [LifecycleUpdate], retention: EventRetention,
                             now: UnixMilliseconds) throws(StoreError) {
        for update in lifecycle {
            try FieldLimit.check(update.appID, field: "appId", maxCharacters: FieldLimit.appID)
            try FieldLimit.check(update.event, field: "event", maxCharacters: FieldLimit.eventName)
        }
        try writeTransaction(.unflushed) { () throws(StoreError) in
            var remaining = events[...]
            while !remaining.isEmpty {
                let rows = Self.eventInsertRows(for: remaining.count)
                var bindings: [SQLValue] = []
                bindings.reserveCapacity(6 * rows)
                for event in remaining.prefix(rows) {
                    bindings += [.integer(event.id), .integer(event.occurredAt), .integer(event.receivedAt), .text(event.kind),
                                 .optionalText(event.appID), .text(event.data)]
                }
                try connection.run(Self.eventInsertStatements[rows]!, bindings)
                remaining = remaining.dropFirst(rows)
            }
            for update in lifecycle {
                try connection.run("""
                    INSERT INTO lifecycle_events (app_id, event, at) VALUES (?, ?, ?)
                    ON CONFLICT (app_id) DO UPDATE SET event = excluded.event, at = excluded.at
                    """, [.text(update.appID), .text(update.event), .integer(update.at)])
            }
            // Both by index: the primary key and received_at.
            try connection.run("DELETE FROM events WHERE id <= (SELECT max(id) FROM events) - ?",
                               [.integer(Int64(retention.maxCount))])
            try connection.run("DELETE FROM events WHERE received_at < ?", [.integer(now - retention.maxAge)])
        }
        for update in lifecycle { noteKnown(update.appID) }
    }

    /// Most events one `INSERT` writes. Each statement opens its cursors (the table, its two
    /// indexes, `sqlite_sequence`) and updates `sqlite_sequence` once, which cost more than a
    /// row: one statement per event made a recorded denial cost ≈ 32 000 instructions.
    static let maxEventsPerInsert = 32

    /// The rows of the next `INSERT` for `remaining` events: the largest power of two up to
    /// `maxEventsPerInsert`, so at most six statements are ever prepared.
    static func eventInsertRows(for remaining: Int) -> Int {
        1 << (Int.bitWidth - 1 - min(remaining, maxEventsPerInsert).leadingZeroBitCount)
    }

    /// `INSERT INTO events` of 1, 2, 4 … `maxEventsPerInsert` rows, by row count.
    static let eventInsertStatements: [Int: String] = Dictionary(uniqueKeysWithValues: (0...maxEventsPerInsert.trailingZeroBitCount).map { power in
        let rows = 1 << power
        return (rows, "INSERT INTO events (id, occurred_at, received_at, kind, app_id, data) VALUES "
                + Array(repeating: "(?, ?, ?, ?, ?, ?)", count: rows).joined(separator: ", "))
    })

    /// The newest `limit` recorded events matching `query`, oldest first.
    public func events(matching query: EventQuery, limit: Int) throws(StoreError) -> [EventRecord] {
        let kinds = query.kinds.map { JSONValue.array($0.map(JSONValue.string)).serializedString() }
        let rows = try connection.query("""
            SELECT id, occurred_at, received_at, kind, app_id, data FROM events
            WHERE (?1 IS NULL OR app_id = ?1) AND (?2 IS NULL OR kind IN (SELECT value FROM json_each(?2)))
              AND (?3 IS NULL OR occurred_at >= ?3) AND (?4 IS NULL OR occurred_at < ?4) AND (?5 IS NULL OR id > ?5)
            ORDER BY id DESC LIMIT ?6
            """, [.optionalText(query.appID), .optionalText(kinds), .optionalInteger(query.since),
                  .optionalInteger(query.until), .optionalInteger(query.afterID), .integer(Int64(limit))]) {
            EventRecord(id: $0.integer(0), occurredAt: $0.integer(1), receivedAt: $0.integer(2), kind: $0.text(3),
                        appID: $0.optionalText(4), data: $0.text(5))
        }
        return rows.reversed()
    }

    /// The highest event id ever recorded (kept after pruning); 0 when none.
    public func lastEventID() throws(StoreError) -> Int64 {
        try connection.query("SELECT seq FROM sqlite_sequence WHERE name = 'events'") { $0.integer(0) }.first ?? 0
    }
}
