extension StateStore {
    /// Throws what `recordRegistration` would for `appVersion` (`.invalidField` naming
    /// `version`), so a caller can refuse such a version before keeping it anywhere else.
    public static func checkAppVersion(_ appVersion: String) throws(StoreError) {
        try FieldLimit.check(appVersion, field: "version", maxCharacters: FieldLimit.appVersion)
    }

    /// Records `appID`'s latest registration (replacing the previous one), unflushed (any app
    /// may register in a loop): a power loss may lose the newest ones.
    public func recordRegistration(appID: String, at time: UnixMilliseconds, appVersion: String?,
                                   pid: Int32, uid: UInt32) throws(StoreError) {
        try FieldLimit.check(appID, field: "appId", maxCharacters: FieldLimit.appID)
        if let appVersion { try Self.checkAppVersion(appVersion) }
        try writeTransaction(.unflushed) { () throws(StoreError) in
            try connection.run("""
                INSERT INTO registrations (app_id, at, app_version, pid, uid) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (app_id) DO UPDATE SET at = excluded.at, app_version = excluded.app_version,
                    pid = excluded.pid, uid = excluded.uid
                """, [.text(appID), .integer(time), .optionalText(appVersion), .integer(Int64(pid)), .integer(Int64(uid))])
        }
        noteKnown(appID)
    }

    /// Records `appID`'s feedback under `key`, replacing any earlier value for that key;
    /// unflushed (an app reports at will): a power loss may lose the newest.
    /// - Throws: `.invalidField` naming `key` (1…100 characters), `message` (≤ 1000) or `data`
    ///   (≤ 16 KiB); `.limitExceeded` for a new key when the app already has
    ///   `feedbackKeysPerApp` keys.
    public func recordFeedback(appID: String, key: String, severity: FeedbackSeverity, message: String,
                               data: String?, at time: UnixMilliseconds) throws(StoreError) {
        try FieldLimit.check(appID, field: "appId", maxCharacters: FieldLimit.appID)
        try FieldLimit.check(key, field: "key", maxCharacters: FieldLimit.feedbackKey)
        try FieldLimit.check(message, field: "message", maxCharacters: FieldLimit.feedbackMessage, allowEmpty: true)
        if let data, data.utf8.count > FieldLimit.feedbackData {
            throw .invalidField(field: "data", reason: "must be at most \(FieldLimit.feedbackData) bytes")
        }
        try writeTransaction(.unflushed) { () throws(StoreError) in
            let keyCount = try connection.query("SELECT count(*), sum(key = ?) FROM feedback WHERE app_id = ?",
                                                [.text(key), .text(appID)]) { ($0.integer(0), $0.optionalInteger(1) ?? 0) }.first
            if let (count, existing) = keyCount, existing == 0, count >= Int64(configuration.feedbackKeysPerApp) {
                throw .limitExceeded(field: "key", limit: configuration.feedbackKeysPerApp)
            }
            try connection.run("""
                INSERT INTO feedback (app_id, key, severity, message, data, at) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (app_id, key) DO UPDATE SET severity = excluded.severity, message = excluded.message,
                    data = excluded.data, at = excluded.at
                """, [.text(appID), .text(key), .text(severity.rawValue), .text(message), .optionalText(data), .integer(time)])
        }
        noteKnown(appID)
    }

    /// Records what `appID` did with `policyVersion` (the latest status per version is kept,
    /// and the newest `acknowledgementsPerApp` versions per app). Unflushed, as feedback (it
    /// is the app's report, sent at will): a power loss may lose the newest.
    public func recordPolicyAcknowledgement(appID: String, policyVersion: String, status: PolicyAcknowledgementStatus,
                                            at time: UnixMilliseconds) throws(StoreError) {
        try FieldLimit.check(appID, field: "appId", maxCharacters: FieldLimit.appID)
        try FieldLimit.check(policyVersion, field: "policyVersion", maxCharacters: FieldLimit.policyVersion)
        try writeTransaction(.unflushed) { () throws(StoreError) in
            try connection.run("""
                INSERT INTO policy_acknowledgements (app_id, policy_version, status, at) VALUES (?, ?, ?, ?)
                ON CONFLICT (app_id, policy_version) DO UPDATE SET status = excluded.status, at = excluded.at
                """, [.text(appID), .text(policyVersion), .text(status.rawValue), .integer(time)])
            try connection.run("""
                DELETE FROM policy_acknowledgements WHERE app_id = ?1 AND rowid NOT IN (
                    SELECT rowid FROM policy_acknowledgements WHERE app_id = ?1 ORDER BY at DESC, rowid DESC LIMIT ?2)
                """, [.text(appID), .integer(Int64(configuration.acknowledgementsPerApp))])
        }
        noteKnown(appID)
    }

    /// Everything known about `appID`, read as one consistent snapshot; `nil` if the store
    /// has never heard of it.
    public func app(appID: String) throws(StoreError) -> AppInventory? {
        try readTransaction { () throws(StoreError) -> AppInventory? in
            let registration = try connection.query(
                "SELECT at, app_version, pid, uid FROM registrations WHERE app_id = ?", [.text(appID)]
            ) { RegistrationRecord(at: $0.integer(0), appVersion: $0.optionalText(1), pid: Int32(truncatingIfNeeded: $0.integer(2)),
                                   uid: UInt32(truncatingIfNeeded: $0.integer(3))) }.first
            let lastEvent = try connection.query("SELECT event, at FROM lifecycle_events WHERE app_id = ?", [.text(appID)]) {
                LifecycleRecord(event: $0.text(0), at: $0.integer(1))
            }.first
            let feedback = try connection.query(
                "SELECT key, severity, message, data, at FROM feedback WHERE app_id = ? ORDER BY key", [.text(appID)]
            ) { FeedbackRecord(key: $0.text(0), severity: FeedbackSeverity(rawValue: $0.text(1)) ?? .error,
                               message: $0.text(2), data: $0.optionalText(3), at: $0.integer(4)) }
            let acknowledgements = try connection.query(
                "SELECT policy_version, status, at FROM policy_acknowledgements WHERE app_id = ? ORDER BY at DESC, rowid DESC",
                [.text(appID)]
            ) { PolicyAcknowledgement(policyVersion: $0.text(0), status: PolicyAcknowledgementStatus(rawValue: $0.text(1)) ?? .error,
                                      at: $0.integer(2)) }
            let wipes = try wipes(appID: appID)
            if registration == nil && lastEvent == nil && feedback.isEmpty && acknowledgements.isEmpty && wipes.isEmpty {
                return nil
            }
            return AppInventory(appID: appID, registration: registration, lastEvent: lastEvent, feedback: feedback,
                                acknowledgements: acknowledgements, wipes: wipes)
        }
    }

    /// When each app that ever registered last did.
    public func lastRegistrationTimes() throws(StoreError) -> [String: UnixMilliseconds] {
        var times: [String: UnixMilliseconds] = [:]
        for (appID, at) in try connection.query("SELECT app_id, at FROM registrations", [], row: { ($0.text(0), $0.integer(1)) }) {
            times[appID] = at
        }
        return times
    }

    /// Every app id the store holds anything about, sorted (a query: `knownAppCount()` counts
    /// them from memory). Each write that adds a row to one of these tables notes its app
    /// (`noteKnown`).
    public func knownApps() throws(StoreError) -> [String] {
        try connection.query("""
            SELECT app_id FROM registrations UNION SELECT app_id FROM lifecycle_events UNION SELECT app_id FROM feedback
            UNION SELECT app_id FROM policy_acknowledgements UNION SELECT app_id FROM wipes ORDER BY 1
            """) { $0.text(0) }
    }
}
