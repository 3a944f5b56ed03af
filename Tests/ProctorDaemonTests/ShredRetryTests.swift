import Foundation
import LinuxIO
@testable import ProctorDaemon
@testable import ProctorStore
import Testing
import TestSupport

/// A retirement's or a compliance violation's shred that fails is retried on the loop's timer
/// (`Daemon+DataKeys`), `Daemon.shredRetryLimit` times, then given up. The restarts that
/// finish what a run left unfinished are tested against the real proctord
/// (`Tests/python/test_data_keys.py`).
@Suite struct ShredRetryTests {
    private static let app = "io.proctor.test.notes"

    private final class Setup {
        let directory: TemporaryDirectory
        let log = KeptLog()
        let daemon: Daemon
        private var isClosed = false

        /// A daemon started on a new directory, whose state holds `pendingShreds` as its record
        /// of the violations' shreds left unfinished, if given.
        /// In `directory`, if given, a state left by an earlier `Setup` (closed) is started again.
        init(retryInterval: Duration = .seconds(1), pendingShreds: String? = nil, in directory: TemporaryDirectory? = nil) throws {
            self.directory = try directory ?? TemporaryDirectory(prefix: "proctor-shred-retry")
            let directory = self.directory
            try FileManager.default.createDirectory(atPath: directory.path + "/config/policy.d", withIntermediateDirectories: true)
            try Self.writePolicy(version: "one", state: "authorized", in: directory.path)
            if let pendingShreds {
                try FileManager.default.createDirectory(atPath: directory.path + "/state", withIntermediateDirectories: true)
                try Data(pendingShreds.utf8).write(to: URL(fileURLWithPath: PendingViolationShreds.path(in: directory.path + "/state")))
            }
            var configuration = DaemonConfiguration.inProcess(directory: directory.path)
            configuration.shredRetryInterval = retryInterval
            daemon = try Daemon.inProcess(configuration, loop: try EventLoop(), keeping: log)
            daemon.runsPolicyWorkInline = true
        }

        deinit {
            close()
            directory.remove()
        }

        func writePolicy(version: String, state: String) throws {
            try Self.writePolicy(version: version, state: state, in: directory.path)
        }

        private static func writePolicy(version: String, state: String, in directory: String) throws {
            let policy = """
                {"schema": 1, "version": "\(version)", "apps": {"\(ShredRetryTests.app)": {"state": "\(state)",
                  "match": {"executable": "/usr/bin/notes"}}}}
                """
            try Data(policy.utf8).write(to: URL(fileURLWithPath: directory + "/config/policy.d/00.json"))
        }

        /// Runs the loop, a turn at a time, until `done` (or a bound far beyond any test's need).
        func runLoop(until done: () -> Bool) throws {
            for _ in 0..<2000 where !done() {
                let stop = daemon.loop.schedule(after: .milliseconds(5)) { [daemon] in daemon.loop.stop() }
                defer { daemon.loop.cancel(stop) }
                try daemon.loop.run()
            }
        }

        /// The messages logged so far.
        func messages() -> [String] {
            daemon.handOffLogBatch()
            daemon.logger.flush()
            return log.written.map(\.message)
        }

        /// Whether state.db, its -wal or its -shm holds `text`.
        func onDisk(_ text: String) -> Bool {
            ["", "-wal", "-shm"].contains { suffix in
                FileManager.default.contents(atPath: daemon.store.databasePath + suffix)?.range(of: Data(text.utf8)) != nil
            }
        }

        /// Stops as proctord does: the store is closed, which checkpoints its log.
        func close() {
            guard !isClosed else { return }
            isClosed = true
            daemon.closeState()
        }
    }

    /// The retirement's shred destroys the key, but a reader's snapshot (the status builder's,
    /// here a test's) keeps the checkpoint from erasing its old bytes, at the shred and at every
    /// retry. After the last retry the shred is given up — logged, and not tried again — and the
    /// erasure is left to the store's close, which completes it once the reader is gone.
    @Test func aShredAReaderHoldsBackIsGivenUpAfterTheLastRetryAndErasedWhenTheStoreCloses() throws {
        let setup = try Setup(retryInterval: .milliseconds(1))  // the 8 retries within 0.3 s, not 3 min
        let daemon = setup.daemon
        _ = try daemon.dataKeys.release(appID: Self.app, uid: 1000, at: 1)
        let wrapped = try #require(try daemon.store.liveDataKey(appID: Self.app, uid: 1000)?.wrapped)
        let keyHex = wrapped.map { String(format: "%02x", $0) }.joined()
        let reader = try StateStore.openReader(path: daemon.store.databasePath)
        try reader.connection.run("BEGIN")
        #expect(try reader.dataKeys(appID: Self.app).count == 1)  // the snapshot is taken

        try setup.writePolicy(version: "two", state: "retired")
        var reloaded = false
        daemon.reload { _ in reloaded = true }
        try setup.runLoop { reloaded }
        #expect(daemon.active.version == "two")
        #expect(daemon.unfinishedShreds.map(\.keysDestroyed) == [true])
        #expect(try daemon.store.liveDataKey(appID: Self.app, uid: 1000) == nil)

        try setup.runLoop { daemon.unfinishedShreds.isEmpty }
        #expect(daemon.unfinishedShreds.isEmpty)
        let messages = setup.messages()
        #expect(messages.contains("State storage failed while erasing the data keys of \(Self.app) (retired by policy two); "
                                  + "given up after \(Daemon.shredRetryLimit) retries: the erasure finishes at the next shred "
                                  + "or when proctord stops: \(StoreError.shredIncomplete(path: daemon.store.databasePath))"),
                "\(messages)")
        #expect(!messages.contains { $0.hasPrefix("Finished erasing") })
        #expect(setup.onDisk(keyHex), "the reader no longer held the checkpoint back: this test proves nothing")
        #expect(!daemon.shredRetryScheduled)

        try reader.connection.run("COMMIT")
        reader.close()
        setup.close()
        #expect(!setup.onDisk(keyHex))
    }

    /// The last run's violation shred succeeded but its record in `pending-shreds` could not be
    /// removed, and the app, compliant again, got a new key: the start redoes the shred through the
    /// generation the violation condemned, so the new key lives. A record of an earlier version,
    /// without the bound, still destroys the live key, as it did.
    @Test func aShredRedoneAtTheStartSparesAKeyMadeAfterIt() throws {
        let first = try Setup()
        defer { withExtendedLifetime(first) {} }  // its deinit removes the directory the others start in
        let directory = first.directory
        _ = try first.daemon.dataKeys.release(appID: Self.app, uid: 1000, at: 1)
        try first.daemon.store.destroyDataKeys(appID: Self.app, uid: 1000, at: 2)
        let (_, newKey) = try first.daemon.dataKeys.release(appID: Self.app, uid: 1000, at: 3)
        #expect(newKey.generation == 2)
        first.close()

        let recorded = #"{"violationShreds": [{"appId": "\#(Self.app)", "uid": 1000, "appVersion": "1.0.0", "throughGeneration": 1}]}"#
        let restarted = try Setup(pendingShreds: recorded, in: directory)
        try restarted.runLoop { restarted.daemon.unfinishedShreds.isEmpty }
        #expect(restarted.messages().contains("Finished erasing the data keys of \(Self.app) "
                                              + "(compliance violation of version 1.0.0: onViolation is wipe) at retry 1"))
        #expect(try restarted.daemon.store.liveDataKey(appID: Self.app, uid: 1000)?.keyID == newKey.keyID)
        #expect(!FileManager.default.fileExists(atPath: PendingViolationShreds.path(in: restarted.daemon.configuration.stateDirectory)))
        restarted.close()

        let earlierVersion = #"{"violationShreds": [{"appId": "\#(Self.app)", "uid": 1000, "appVersion": "1.0.0"}]}"#
        let again = try Setup(pendingShreds: earlierVersion, in: directory)
        try again.runLoop { again.daemon.unfinishedShreds.isEmpty }
        #expect(try again.daemon.store.liveDataKey(appID: Self.app, uid: 1000) == nil)
    }

    /// A record of the violations' shreds left unfinished that cannot be read stops nothing:
    /// the start says so, naming the file, and serves.
    @Test func anUnreadableRecordOfPendingShredsIsLoggedAndTheStartGoesOn() throws {
        for damaged in [#"{"violationShreds": [{"appId": "a.b"}]}"#, "{", #"{"other": []}"#,
                        #"{"violationShreds": [{"appId": "a.b", "uid": 1, "throughGeneration": "1"}]}"#] {
            let setup = try Setup(pendingShreds: damaged)
            let record = PendingViolationShreds.path(in: setup.daemon.configuration.stateDirectory)
            let messages = setup.messages()
            #expect(messages.contains { $0.hasPrefix("The compliance violations' shreds left unfinished, recorded in \(record), "
                                                     + "cannot be redone: ") }, "\(messages)")
            #expect(setup.daemon.unfinishedShreds.isEmpty)
        }
    }
}
