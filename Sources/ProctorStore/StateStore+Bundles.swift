import JSONCore
extension StateStore {
    /// The bundle in force: the newest history entry, or `nil` if none was ever applied.
    public func currentBundle() throws(StoreError) -> BundleRecord? {
        try connection.query(Self.selectBundles + " ORDER BY id DESC LIMIT 1", row: Self.bundleRecord).first
    }

    /// The kept history, newest (the bundle in force) first; at most `historyLimit` entries.
    public func history() throws(StoreError) -> [BundleRecord] {
        try connection.query(Self.selectBundles + " ORDER BY id DESC", row: Self.bundleRecord)
    }

    /// Records `canonicalJSON` (the policy `version`) as the bundle in force, in one durable
    /// transaction, and trims the history to `historyLimit` entries.
    ///
    /// - Parameter expectedVersion: compare-and-swap guard: when not `nil`, the apply happens
    ///   only if the bundle in force has exactly this version (the MDM's view is current).
    /// - Parameter sha256: the SHA-256 of `canonicalJSON` (lowercase hex) when the caller has
    ///   already computed it (proctord hashes a policy once, off its loop); computed here otherwise.
    /// - Returns: the new history entry.
    /// - Parameter signed: for a signed bundle, its serial and signing key: recorded as the
    ///   highest serial applied in the same transaction, refused with `.serialNotNewer` unless
    ///   greater than the one recorded, so the check and the write cannot be separated.
    /// - Throws: `.versionConflict` (nothing written) if `expectedVersion` does not match;
    ///   `.invalidField` for an empty or oversized version or text; `.storageFull`, `.readOnly`,
    ///   `.io` when it cannot be written — the previous bundle then stays in force.
    @discardableResult
    public func apply(version: String, canonicalJSON: String, sha256: String? = nil, expectedVersion: String?,
                      at time: UnixMilliseconds, byUID uid: UInt32,
                      signed: (serial: Int64, keyID: String)? = nil) throws(StoreError) -> BundleRecord {
        try FieldLimit.check(version, field: "version", maxCharacters: FieldLimit.policyVersion)
        if canonicalJSON.isEmpty { throw .invalidField(field: "policy", reason: "must not be empty") }
        if canonicalJSON.utf8.count > FieldLimit.bundleBytes {
            throw .invalidField(field: "policy", reason: "must be at most \(FieldLimit.bundleBytes) bytes of canonical JSON")
        }
        let digest = sha256 ?? SHA256.hexDigest(of: canonicalJSON)
        return try writeTransaction { () throws(StoreError) -> BundleRecord in
            if let expectedVersion {
                let current = try currentBundle()?.version
                // By bytes, as SQLite compares versions: `==` would take "cafe\u{301}" for "caf\u{E9}".
                guard current?.hasSameBytes(as: expectedVersion) == true else {
                    throw .versionConflict(expected: expectedVersion, current: current)
                }
            }
            if let signed {
                try FieldLimit.check(signed.keyID, field: "keyId", maxCharacters: 64)
                let last = try lastAppliedSerial()?.serial ?? 0
                guard signed.serial > last else { throw .serialNotNewer(serial: signed.serial, lastApplied: last) }
                try connection.run("""
                    INSERT INTO signed_bundle_serial (id, serial, key_id, applied_at) VALUES (1, ?, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET serial = excluded.serial, key_id = excluded.key_id,
                                                   applied_at = excluded.applied_at
                    """, [.integer(signed.serial), .text(signed.keyID), .integer(time)])
            }
            return try insertBundle(version: version, sha256: digest, canonicalJSON: canonicalJSON, at: time, uid: uid, kind: .apply)
        }
    }

    /// The highest serial of a signed bundle ever applied, the key that signed it and when;
    /// `nil` if no signed bundle was applied. Rollbacks and history trimming leave it alone.
    public func lastAppliedSerial() throws(StoreError) -> (serial: Int64, keyID: String, appliedAt: UnixMilliseconds)? {
        try connection.query("SELECT serial, key_id, applied_at FROM signed_bundle_serial WHERE id = 1") { row in
            (row.integer(0), row.text(1), row.integer(2))
        }.first
    }

    /// Makes the newest kept entry with `version` the bundle in force again, as a new history
    /// entry of kind `.rollback` (the history records who went back, and when).
    ///
    /// - Throws: `.unknownVersion` if no kept entry has that version; write errors as for `apply`.
    @discardableResult
    public func rollback(to version: String, at time: UnixMilliseconds, byUID uid: UInt32) throws(StoreError) -> BundleRecord {
        try FieldLimit.check(version, field: "version", maxCharacters: FieldLimit.policyVersion)
        return try writeTransaction { () throws(StoreError) -> BundleRecord in
            let target = try connection.query(Self.selectBundles + " WHERE version = ? ORDER BY id DESC LIMIT 1",
                                              [.text(version)], row: Self.bundleRecord).first
            guard let target else { throw .unknownVersion(version) }
            return try insertBundle(version: target.version, sha256: target.sha256, canonicalJSON: target.canonicalJSON,
                                    at: time, uid: uid, kind: .rollback)
        }
    }

    /// The newest kept history entry with `version` whose content is not `sha256`, if any:
    /// a version names one content, so such an apply is refused unless forced.
    public func otherContent(ofVersion version: String, than sha256: String) throws(StoreError) -> BundleRecord? {
        try connection.query(Self.selectBundles + " WHERE version = ? AND sha256 != ? ORDER BY id DESC LIMIT 1",
                             [.text(version), .text(sha256)], row: Self.bundleRecord).first
    }

    private func insertBundle(version: String, sha256: String, canonicalJSON: String, at time: UnixMilliseconds,
                              uid: UInt32, kind: BundleChangeKind) throws(StoreError) -> BundleRecord {
        let id = try connection.query(
            "INSERT INTO bundles (version, sha256, json, applied_at, applied_by, kind) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
            [.text(version), .text(sha256), .text(canonicalJSON), .integer(time), .integer(Int64(uid)), .text(kind.rawValue)]
        ) { $0.integer(0) }.first ?? 0
        try connection.run("DELETE FROM bundles WHERE id NOT IN (SELECT id FROM bundles ORDER BY id DESC LIMIT ?)",
                           [.integer(Int64(configuration.historyLimit))])
        return BundleRecord(id: id, version: version, sha256: sha256, canonicalJSON: canonicalJSON,
                            appliedAt: time, appliedByUID: uid, kind: kind)
    }

    private static let selectBundles = "SELECT id, version, sha256, json, applied_at, applied_by, kind FROM bundles"

    private static func bundleRecord(_ row: SQLRow) -> BundleRecord {
        BundleRecord(id: row.integer(0), version: row.text(1), sha256: row.text(2), canonicalJSON: row.text(3),
                     appliedAt: row.integer(4), appliedByUID: UInt32(truncatingIfNeeded: row.integer(5)),
                     kind: BundleChangeKind(rawValue: row.text(6)) ?? .apply)
    }
}
