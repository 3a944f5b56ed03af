extension StateStore {
    /// Records a wipe order for `appID`, durably, before the daemon delivers it.
    /// - Returns: the new directive (state `.issued`), its `id` a random version-4 UUID string.
    public func issueWipe(appID: String, issuedAt time: UnixMilliseconds, byUID uid: UInt32) throws(StoreError) -> WipeDirective {
        try FieldLimit.check(appID, field: "appId", maxCharacters: FieldLimit.appID)
        let directive = WipeDirective(id: Self.randomUUID(), appID: appID, issuedAt: time, issuedByUID: uid,
                                      deliveredAt: nil, completedAt: nil)
        try writeTransaction { () throws(StoreError) in
            try connection.run("INSERT INTO wipes (id, app_id, issued_at, issued_by) VALUES (?, ?, ?, ?)",
                               [.text(directive.id), .text(appID), .integer(time), .integer(Int64(uid))])
        }
        noteKnown(appID)
        return directive
    }

    /// Directives for `appID` not yet acknowledged (issued or delivered), oldest first: what
    /// the daemon hands to the app at registration and on its `Subscribe` stream.
    public func pendingWipes(appID: String) throws(StoreError) -> [WipeDirective] {
        try connection.query(Self.selectWipes + " WHERE app_id = ? AND completed_at IS NULL ORDER BY issued_at, rowid",
                             [.text(appID)], row: Self.wipeDirective)
    }

    /// The apps that have a directive not yet acknowledged: lets the daemon skip the query
    /// for every other app when it answers `Register` and `Subscribe`.
    public func appsWithPendingWipes() throws(StoreError) -> Set<String> {
        Set(try connection.query("SELECT DISTINCT app_id FROM wipes WHERE completed_at IS NULL", []) { $0.text(0) })
    }

    /// Every kept directive for `appID`, pending and completed, newest first.
    public func wipes(appID: String) throws(StoreError) -> [WipeDirective] {
        try connection.query(Self.selectWipes + " WHERE app_id = ? ORDER BY issued_at DESC, rowid DESC",
                             [.text(appID)], row: Self.wipeDirective)
    }

    /// Notes that directive `id` was handed to a session. Only the first delivery time is kept.
    /// Unflushed (each registration of the app delivers a pending directive again): a power
    /// loss may lose the mark, never the directive, which stays pending until acknowledged.
    /// - Returns: `false` if no pending directive has that id (unknown or already completed).
    @discardableResult
    public func markDelivered(id: String, at time: UnixMilliseconds) throws(StoreError) -> Bool {
        try writeTransaction(.unflushed) { () throws(StoreError) -> Bool in
            try connection.run("UPDATE wipes SET delivered_at = COALESCE(delivered_at, ?) WHERE id = ? AND completed_at IS NULL",
                               [.integer(time), .text(id)])
            return connection.changes == 1
        }
    }

    /// Records that `appID` carried out directive `id`, flushed before it returns (a wipe
    /// acknowledged must not come back after a power loss). An app can make it write once per
    /// directive: acknowledging again changes nothing and writes nothing. Keeps at most `completedWipesPerApp` completed directives per app.
    /// - Returns: `true` if this call completed the directive, `false` if it was already completed.
    /// - Throws: `.unknownWipe` if no directive `id` exists for `appID` (an app cannot
    ///   acknowledge another app's wipe).
    @discardableResult
    public func acknowledgeWipe(id: String, appID: String, at time: UnixMilliseconds) throws(StoreError) -> Bool {
        try FieldLimit.check(id, field: "directiveId", maxCharacters: FieldLimit.wipeID)
        return try writeTransaction { () throws(StoreError) -> Bool in
            let completed = try connection.query("SELECT completed_at FROM wipes WHERE id = ? AND app_id = ?",
                                                 [.text(id), .text(appID)]) { $0.optionalInteger(0) }
            guard let completedAt = completed.first else { throw .unknownWipe(id: id, appID: appID) }
            if completedAt != nil { return false }
            try connection.run("UPDATE wipes SET completed_at = ?, delivered_at = COALESCE(delivered_at, ?) WHERE id = ?",
                               [.integer(time), .integer(time), .text(id)])
            try connection.run("""
                DELETE FROM wipes WHERE app_id = ?1 AND completed_at IS NOT NULL AND id NOT IN (
                    SELECT id FROM wipes WHERE app_id = ?1 AND completed_at IS NOT NULL ORDER BY completed_at DESC, rowid DESC LIMIT ?2)
                """, [.text(appID), .integer(Int64(configuration.completedWipesPerApp))])
            return true
        }
    }

    private static let selectWipes = "SELECT id, app_id, issued_at, issued_by, delivered_at, completed_at FROM wipes"

    private static func wipeDirective(_ row: SQLRow) -> WipeDirective {
        WipeDirective(id: row.text(0), appID: row.text(1), issuedAt: row.integer(2),
                      issuedByUID: UInt32(truncatingIfNeeded: row.integer(3)),
                      deliveredAt: row.optionalInteger(4), completedAt: row.optionalInteger(5))
    }

    /// A random (version 4, RFC 9562) UUID in its lowercase text form.
    private static func randomUUID() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        bytes[6] = (bytes[6] & 0x0f) | 0x40
        bytes[8] = (bytes[8] & 0x3f) | 0x80
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for (index, byte) in bytes.enumerated() {
            if [4, 6, 8, 10].contains(index) { text.append(UInt8(ascii: "-")) }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
