extension StateStore {
    /// Keeps `payload` (JSON text) for `appID` until `expiresAt`, durably, for its next
    /// registration; expired entries of the app go first.
    /// - Throws: `.invalidField` for an empty or oversized app id or payload (≤ 64 KiB);
    ///   `.limitExceeded` when the app already has `queuedNotificationsPerApp` waiting.
    @discardableResult
    public func queueNotification(appID: String, payload: String, at time: UnixMilliseconds, expiresAt: UnixMilliseconds,
                                  byUID uid: UInt32) throws(StoreError) -> QueuedNotification {
        try FieldLimit.check(appID, field: "appId", maxCharacters: FieldLimit.appID)
        if payload.utf8.count > FieldLimit.notificationPayload {
            throw .invalidField(field: "payload", reason: "must be at most \(FieldLimit.notificationPayload) bytes of JSON")
        }
        return try writeTransaction { () throws(StoreError) -> QueuedNotification in
            try dropExpiredNotifications(appID: appID, now: time)
            let waiting = try connection.query("SELECT COUNT(*) FROM queued_notifications WHERE app_id = ?",
                                               [.text(appID)]) { $0.integer(0) }.first ?? 0
            guard waiting < configuration.queuedNotificationsPerApp else {
                throw .limitExceeded(field: "payload", limit: configuration.queuedNotificationsPerApp)
            }
            let id = try connection.query("""
                INSERT INTO queued_notifications (app_id, payload, queued_at, expires_at, queued_by)
                VALUES (?, ?, ?, ?, ?) RETURNING id
                """, [.text(appID), .text(payload), .integer(time), .integer(expiresAt), .integer(Int64(uid))]) { $0.integer(0) }.first ?? 0
            return QueuedNotification(id: id, appID: appID, payload: payload, queuedAt: time, expiresAt: expiresAt, queuedByUID: uid)
        }
    }

    /// The app's unexpired queued notifications, oldest first: what the daemon hands to its
    /// next subscriber, then removes (`removeQueuedNotifications`).
    public func queuedNotifications(appID: String, now: UnixMilliseconds) throws(StoreError) -> [QueuedNotification] {
        try connection.query(
            "SELECT id, app_id, payload, queued_at, expires_at, queued_by FROM queued_notifications "
                + "WHERE app_id = ? AND expires_at > ? ORDER BY id",
            [.text(appID), .integer(now)]
        ) { row in
            QueuedNotification(id: row.integer(0), appID: row.text(1), payload: row.text(2), queuedAt: row.integer(3),
                               expiresAt: row.integer(4), queuedByUID: UInt32(truncatingIfNeeded: row.integer(5)))
        }
    }

    /// Removes the delivered notifications `ids` of `appID`, and its expired ones, in one transaction.
    public func removeQueuedNotifications(ids: [Int64], appID: String, now: UnixMilliseconds) throws(StoreError) {
        try writeTransaction { () throws(StoreError) in
            for id in ids {
                try connection.run("DELETE FROM queued_notifications WHERE id = ? AND app_id = ?", [.integer(id), .text(appID)])
            }
            try dropExpiredNotifications(appID: appID, now: now)
        }
    }

    private func dropExpiredNotifications(appID: String, now: UnixMilliseconds) throws(StoreError) {
        try connection.run("DELETE FROM queued_notifications WHERE app_id = ? AND expires_at <= ?", [.text(appID), .integer(now)])
    }
}
