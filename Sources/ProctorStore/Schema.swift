/// The database schema as a list of forward migrations. Step `n` (1-based) turns a database
/// whose `PRAGMA user_version` is `n - 1` into version `n`. Steps are never edited once
/// released; a schema change is a new step appended here (and described in docs/state.md).
enum Schema {
    static let migrations: [String] = [
        // 1: applied bundles (current = newest entry) and wipe directives.
        """
        CREATE TABLE bundles (
            id          INTEGER PRIMARY KEY AUTOINCREMENT,
            version     TEXT    NOT NULL,
            sha256      TEXT    NOT NULL,
            json        TEXT    NOT NULL,
            applied_at  INTEGER NOT NULL,
            applied_by  INTEGER NOT NULL
        );
        CREATE TABLE wipes (
            id            TEXT    PRIMARY KEY,
            app_id        TEXT    NOT NULL,
            issued_at     INTEGER NOT NULL,
            issued_by     INTEGER NOT NULL,
            delivered_at  INTEGER,
            completed_at  INTEGER
        );
        CREATE INDEX wipes_by_app ON wipes (app_id, issued_at);
        """,
        // 2: how each bundle entry came to be, and the per-app inventory.
        """
        ALTER TABLE bundles ADD COLUMN kind TEXT NOT NULL DEFAULT 'apply' CHECK (kind IN ('apply', 'rollback'));
        CREATE TABLE registrations (
            app_id       TEXT    PRIMARY KEY,
            at           INTEGER NOT NULL,
            app_version  TEXT,
            pid          INTEGER NOT NULL,
            uid          INTEGER NOT NULL
        );
        CREATE TABLE lifecycle_events (
            app_id  TEXT    PRIMARY KEY,
            event   TEXT    NOT NULL,
            at      INTEGER NOT NULL
        );
        CREATE TABLE feedback (
            app_id    TEXT    NOT NULL,
            key       TEXT    NOT NULL,
            severity  TEXT    NOT NULL CHECK (severity IN ('info', 'error')),
            message   TEXT    NOT NULL,
            data      TEXT,
            at        INTEGER NOT NULL,
            PRIMARY KEY (app_id, key)
        );
        CREATE TABLE policy_acknowledgements (
            app_id          TEXT    NOT NULL,
            policy_version  TEXT    NOT NULL,
            status          TEXT    NOT NULL CHECK (status IN ('applied', 'error', 'unsupported')),
            at              INTEGER NOT NULL,
            PRIMARY KEY (app_id, policy_version)
        );
        """,
        // 3: the processes proctord verified, so each keeps its identity after its
        // executable is replaced on disk (a package upgrade) and across restarts.
        """
        CREATE TABLE identity_pins (
            boot_id     TEXT    NOT NULL,
            pid         INTEGER NOT NULL,
            start_time  INTEGER NOT NULL,
            executable  TEXT    NOT NULL,
            device      INTEGER NOT NULL,
            inode       INTEGER NOT NULL,
            pinned_at   INTEGER NOT NULL,
            PRIMARY KEY (boot_id, pid, start_time, executable)
        );
        """,
        // 4: administrators' notifications for apps that had no session to receive them,
        // delivered when the app next subscribes, until they expire.
        """
        CREATE TABLE queued_notifications (
            id          INTEGER PRIMARY KEY AUTOINCREMENT,
            app_id      TEXT    NOT NULL,
            payload     TEXT    NOT NULL,
            queued_at   INTEGER NOT NULL,
            expires_at  INTEGER NOT NULL,
            queued_by   INTEGER NOT NULL
        );
        CREATE INDEX queued_notifications_by_app ON queued_notifications (app_id, id);
        """,
        // 5: the highest serial of a signed bundle ever applied (one row at most): a bundle
        // must carry a greater one, so an old, validly signed bundle cannot be replayed.
        // Kept apart from `bundles`, whose history is trimmed and rolled back.
        """
        CREATE TABLE signed_bundle_serial (
            id          INTEGER PRIMARY KEY CHECK (id = 1),
            serial      INTEGER NOT NULL,
            key_id      TEXT    NOT NULL,
            applied_at  INTEGER NOT NULL
        );
        """,
        // 6: the data keys proctord holds for each app and user (issue 13), wrapped by the
        // machine key. A destroyed key keeps its row (for `proctorctl app`) without `wrapped`.
        """
        CREATE TABLE data_keys (
            app_id            TEXT    NOT NULL,
            uid               INTEGER NOT NULL,
            generation        INTEGER NOT NULL,
            key_id            TEXT    NOT NULL,
            wrapped           TEXT,
            created_at        INTEGER NOT NULL,
            last_released_at  INTEGER,
            destroyed_at      INTEGER,
            PRIMARY KEY (app_id, uid, generation),
            CHECK ((wrapped IS NULL) = (destroyed_at IS NOT NULL))
        );
        """,
        // 7: the event history behind Admin.EventHistory, bounded by count and age. Ids are
        // given by the daemon (AUTOINCREMENT keeps the highest ever used after pruning).
        """
        CREATE TABLE events (
            id           INTEGER PRIMARY KEY AUTOINCREMENT,
            occurred_at  INTEGER NOT NULL,
            received_at  INTEGER NOT NULL,
            kind         TEXT    NOT NULL,
            app_id       TEXT,
            data         TEXT    NOT NULL
        );
        CREATE INDEX events_by_app ON events (app_id, id);
        CREATE INDEX events_by_received_at ON events (received_at);
        """,
    ]

    /// The `user_version` this build writes and understands.
    static var latestVersion: Int32 { Int32(migrations.count) }
}
