import Foundation
import Glibc
import Testing
import TestSupport
@testable import ProctorStore

@Suite struct DataKeyTests {
    let directory: StoreDirectory
    init() throws { directory = try StoreDirectory() }

    let wrapped: [UInt8] = (0..<73).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }

    @Test func oneLiveKeyPerAppAndUserAcrossARestartThenDestroyedAndRotated() throws {
        let store = try directory.openStore()
        #expect(try store.liveDataKey(appID: "com.example.notes", uid: 1000) == nil)
        #expect(try store.nextDataKeyGeneration(appID: "com.example.notes", uid: 1000) == 1)
        let stored = try store.insertDataKey(appID: "com.example.notes", uid: 1000, generation: 1, keyID: "00112233aabbccdd",
                                             wrapped: wrapped, at: 100)
        #expect(throws: StoreError.self) {
            try store.insertDataKey(appID: "com.example.notes", uid: 1000, generation: 2, keyID: "x", wrapped: wrapped, at: 101)
        }
        try store.insertDataKey(appID: "com.example.notes", uid: 1001, generation: 1, keyID: "ffee", wrapped: wrapped, at: 102)
        store.close()

        let restarted = try directory.openStore()
        #expect(try restarted.liveDataKey(appID: "com.example.notes", uid: 1000) == stored)
        try restarted.markDataKeyReleased(appID: "com.example.notes", uid: 1000, at: 200)
        #expect(try restarted.liveDataKey(appID: "com.example.notes", uid: 1000)?.lastReleasedAt == 200)
        #expect(try restarted.appsWithLiveDataKeys() == ["com.example.notes"])

        #expect(try restarted.destroyDataKeys(appID: "com.example.notes", at: 300) == 2)
        #expect(try restarted.destroyDataKeys(appID: "com.example.notes", at: 301) == 0)
        #expect(try restarted.liveDataKey(appID: "com.example.notes", uid: 1000) == nil)
        #expect(try restarted.appsWithLiveDataKeys().isEmpty)
        #expect(try restarted.nextDataKeyGeneration(appID: "com.example.notes", uid: 1000) == 2)
        let kept = try restarted.dataKeys(appID: "com.example.notes")
        #expect(kept.map(\.uid) == [1000, 1001] && kept.allSatisfy { $0.wrapped == nil && $0.destroyedAt == 300 })
        #expect(kept[0].keyID == "00112233aabbccdd" && kept[0].createdAt == 100 && kept[0].lastReleasedAt == 200)
    }

    /// A shred bounded by a generation (a violation's, redone at a start) destroys none after it:
    /// the key made since for the same app and user lives on; an earlier live one of another
    /// user goes.
    @Test func aShredThroughAGenerationSparesTheLaterKeys() throws {
        let store = try directory.openStore()
        defer { store.close() }
        try store.insertDataKey(appID: "com.example.notes", uid: 1000, generation: 1, keyID: "a", wrapped: wrapped, at: 1)
        try store.destroyDataKeys(appID: "com.example.notes", uid: 1000, at: 2)
        try store.insertDataKey(appID: "com.example.notes", uid: 1000, generation: 2, keyID: "b", wrapped: wrapped, at: 3)
        try store.insertDataKey(appID: "com.example.notes", uid: 1001, generation: 1, keyID: "c", wrapped: wrapped, at: 4)

        #expect(try store.destroyDataKeys(appID: "com.example.notes", uid: 1000, throughGeneration: 1, at: 5) == 0)
        #expect(try store.liveDataKey(appID: "com.example.notes", uid: 1000)?.keyID == "b")
        #expect(try store.destroyDataKeys(appID: "com.example.notes", throughGeneration: 1, at: 6) == 1)
        #expect(try store.liveDataKey(appID: "com.example.notes", uid: 1001) == nil)
        #expect(try store.liveDataKey(appID: "com.example.notes", uid: 1000)?.keyID == "b")
        #expect(try store.destroyDataKeys(appID: "com.example.notes", uid: 1000, throughGeneration: 2, at: 7) == 1)
        #expect(try store.appsWithLiveDataKeys().isEmpty)
    }

    @Test func aDestroyedKeyLeavesNoTraceInTheDatabaseOrItsLog() throws {
        let store = try directory.openStore()
        try store.insertDataKey(appID: "com.example.notes", uid: 0, generation: 1, keyID: "k", wrapped: wrapped, at: 1)
        let keyHex = hex(wrapped)
        #expect(try filesContain(directory.path, keyHex))
        try store.destroyDataKeys(appID: "com.example.notes", at: 2)
        #expect(try !filesContain(directory.path, keyHex))
        store.close()
    }

    /// The status document's builder reads through a second connection (`openReader`): while a
    /// read transaction of it holds a snapshot older than the shred, SQLite cannot copy the log
    /// into the database nor empty it, so the wrapped key's bytes stay in the files. The shred
    /// must then say so, never succeed; retried once the reader stepped aside, it completes.
    @Test func aReaderHoldingASnapshotMakesTheShredFailUntilRetriedNeverASilentSuccess() throws {
        var configuration = StateStore.Configuration()
        configuration.busyTimeoutMilliseconds = 20  // how long the checkpoint waits for the reader
        let store = try directory.openStore(configuration: configuration)
        defer { store.close() }
        try store.insertDataKey(appID: "com.example.notes", uid: 0, generation: 1, keyID: "k", wrapped: wrapped, at: 1)
        let keyHex = hex(wrapped)
        let reader = try StateStore.openReader(path: directory.databasePath, configuration: configuration)
        defer { reader.close() }
        try reader.connection.run("BEGIN")
        #expect(try reader.dataKeys(appID: "com.example.notes").count == 1)  // the snapshot is taken

        let blocked = Result { () throws(StoreError) in try store.destroyDataKeys(appID: "com.example.notes", at: 2) }
        let bytesLeft = try filesContain(directory.path, keyHex)
        switch blocked {
        case .success: #expect(!bytesLeft, "a shred reported done while the key's bytes are still in the files")
        case .failure(let error): #expect(error == .shredIncomplete(path: directory.databasePath))
        }
        #expect(bytesLeft, "the reader's snapshot no longer holds the checkpoint back: this test proves nothing")
        #expect(try store.liveDataKey(appID: "com.example.notes", uid: 0) == nil)  // destroyed for every purpose but the bytes
        #expect(throws: StoreError.shredIncomplete(path: directory.databasePath)) { try store.eraseDestroyedDataKeys() }
        #expect(try filesContain(directory.path, keyHex))

        try reader.connection.run("COMMIT")
        #expect(try store.destroyDataKeys(appID: "com.example.notes", at: 3) == 0)  // the retried wipe: nothing left to destroy…
        #expect(try !filesContain(directory.path, keyHex))  // …but it finished erasing
    }

    /// A shred nobody waits for (a retirement's, a violation's, their retries) runs on the
    /// daemon's loop, which must keep answering `Decide`: it does not wait for a reader to step
    /// aside (the busy timeout, 5 s in proctord) but says at once that it did not finish, and
    /// the daemon retries it. The reader here steps aside after 3 s, far within the 60 s busy
    /// timeout: a waiting checkpoint would complete then, and the call succeed.
    @Test func aShredThatDoesNotWaitForReadersFailsAtOnceWhileOneHoldsASnapshot() throws {
        var configuration = StateStore.Configuration()
        configuration.busyTimeoutMilliseconds = 60_000
        let store = try directory.openStore(configuration: configuration)
        defer { store.close() }
        try store.insertDataKey(appID: "com.example.notes", uid: 0, generation: 1, keyID: "k", wrapped: wrapped, at: 1)
        // Used by the thread below only after this one is done with it.
        nonisolated(unsafe) let reader = try StateStore.openReader(path: directory.databasePath, configuration: configuration)
        try reader.connection.run("BEGIN")
        #expect(try reader.dataKeys(appID: "com.example.notes").count == 1)  // the snapshot is taken
        let readerDone = DispatchSemaphore(value: 0)
        let shredReturned = DispatchSemaphore(value: 0)
        let readerThread = Thread {
            _ = shredReturned.wait(timeout: .now() + 3)
            try? reader.connection.run("COMMIT")
            reader.close()
            readerDone.signal()
        }
        readerThread.start()

        let attempt = Result { () throws(StoreError) in
            try store.destroyDataKeys(appID: "com.example.notes", at: 2, waitingForReaders: false)
        }
        let retry = Result { () throws(StoreError) in try store.eraseDestroyedDataKeys(waitingForReaders: false) }
        shredReturned.signal()
        readerDone.wait()
        #expect(throws: StoreError.shredIncomplete(path: directory.databasePath)) { try attempt.get() }
        #expect(throws: StoreError.shredIncomplete(path: directory.databasePath)) { try retry.get() }
        #expect(try store.liveDataKey(appID: "com.example.notes", uid: 0) == nil)
        try store.eraseDestroyedDataKeys(waitingForReaders: false)  // the reader is gone: it completes
        #expect(try !filesContain(directory.path, hex(wrapped)))
    }

    /// SQLite frees a cell's space when the row moves (a page split while other apps' keys are
    /// added, a row rewritten at a release, other rows shrinking at their own shreds) and, unless
    /// `secure_delete` was on at that moment, leaves the old bytes in the page's free space or on
    /// a freelist page, where the shred's own `secure_delete` never reaches them. Debian's
    /// libsqlite3 is built with SQLITE_SECURE_DELETE (on for every connection), so this passes
    /// here; against a library with SQLite's upstream default (off) it fails (tried by turning
    /// it off on the store's connection first: the key's bytes are left in state.db).
    @Test func aShredLeavesNoStaleCopyThatEarlierWritesMovedAround() throws {
        let store = try directory.openStore()
        defer { store.close() }
        let secret: [UInt8] = (0..<73).map { UInt8(truncatingIfNeeded: $0 &* 91 &+ 7) }
        try store.insertDataKey(appID: "com.example.target", uid: 1000, generation: 1, keyID: "t1", wrapped: secret, at: 1)
        for app in 0..<400 {  // enough rows to split the table's pages several times around the target's row
            try store.insertDataKey(appID: "com.example.app\(app)", uid: 1000, generation: 1, keyID: "k\(app)",
                                    wrapped: wrapped, at: 2)
            if app % 50 == 0 { try store.markDataKeyReleased(appID: "com.example.target", uid: 1000, at: 1_000_000_000_000 + Int64(app)) }
        }
        for app in stride(from: 0, to: 400, by: 3) { try store.destroyDataKeys(appID: "com.example.app\(app)", at: 3) }
        try store.destroyDataKeys(appID: "com.example.target", at: 4)
        let part = partOfKey(hex(secret), foundIn: directory.databasePath)
        #expect(part == nil, "bytes \((part ?? 0) / 2)... of the destroyed key are still on disk")
    }

    /// A corrupt database is kept for inspection (`state.db.corrupt-<time>`), but the fresh store
    /// never learns its keys, so no later wipe could reach them there: whoever gets the machine
    /// key could unwrap them from the copy. They are erased from the kept file and its
    /// write-ahead log as they are moved aside; the rest of the copy is kept as it was.
    @Test func aCorruptDatabaseIsKeptWithoutItsWrappedKeys() throws {
        let path = directory.databasePath
        let store = try directory.openStore()
        for version in 1...5 { try store.applyForTest("\(version)", padding: 3000) }  // a page each
        try store.insertDataKey(appID: "com.example.notes", uid: 1000, generation: 1, keyID: "00112233aabbccdd",
                                wrapped: wrapped, at: 1)
        try store.connection.run("PRAGMA wal_checkpoint(TRUNCATE)")
        let inLog: [UInt8] = (0..<73).map { UInt8(truncatingIfNeeded: $0 &* 53 &+ 29) }
        try store.insertDataKey(appID: "com.example.mail", uid: 1000, generation: 1, keyID: "k", wrapped: inLog, at: 2)
        // The files as a crash leaves them (the second key only in the log), read before the close folds the log in.
        var database = try #require(FileManager.default.contents(atPath: path))
        let log = try #require(FileManager.default.contents(atPath: path + "-wal"))
        store.close()

        // Damage the bundles' pages, which the log does not hold: the keys' page stays intact.
        let padding = Data(String(repeating: "x", count: 64).utf8)
        var damagedPages = 0
        for page in stride(from: 4096, to: database.count, by: 4096) where database[page..<page + 4096].range(of: padding) != nil {
            database.replaceSubrange(page..<page + 4096, with: Data(repeating: 0x5A, count: 4096))
            damagedPages += 1
        }
        #expect(damagedPages == 5)
        try database.write(to: URL(fileURLWithPath: path))
        try log.write(to: URL(fileURLWithPath: path + "-wal"))
        #expect(partOfKey(hex(wrapped), foundIn: path) != nil && partOfKey(hex(inLog), foundIn: path) != nil)

        let recovered = try directory.openStore(now: 1_000)
        defer { recovered.close() }
        let recovery = try #require(recovered.recoveredCorruption)
        #expect(recovery.movedTo == path + ".corrupt-19700101T000001Z")
        #expect(FileManager.default.fileExists(atPath: recovery.movedTo + "-wal"))
        for (name, key) in [("the file's", wrapped), ("the log's", inLog)] {
            let part = partOfKey(hex(key), foundIn: recovery.movedTo)
            #expect(part == nil, "bytes \((part ?? 0) / 2)... of \(name) key are still in the kept copy")
        }
        #expect(recovery.erasedHexRuns >= 3)  // the file's key, and both keys in the log's copy of their page
        // The rest of the copy is the damaged file as it was: the log was not folded into it on close.
        var expected = [UInt8](database)
        _ = expected.withUnsafeMutableBufferPointer { WrappedKeyErasure.eraseRuns(in: $0) }
        let kept = try #require(FileManager.default.contents(atPath: recovery.movedTo))
        #expect(kept.range(of: Data("com.example.mail".utf8)) == nil, "the log's page was copied into the kept file")
        #expect([UInt8](kept) == expected)
    }

    /// SQLite follows a `state.db` that is a symbolic link, and keeps its `-wal` beside the file
    /// it names; the erasure would follow it too, overwriting the hex in whatever file it names
    /// (here not a database at all, so "corrupt"), then move the link alone aside, leaving that
    /// file's log with its keys. A careless administrator's link is refused instead: nothing
    /// is erased or moved, and the error says why.
    @Test func aCorruptDatabaseThatIsASymbolicLinkIsNeitherErasedThroughItNorMoved() throws {
        let elsewhere = try StoreDirectory()
        let named = elsewhere.appending("machine-id").path
        let contents = String(repeating: "5e", count: 16) + "\n"  // 32 hex digits: what /etc/machine-id holds
        try Data(contents.utf8).write(to: URL(fileURLWithPath: named))
        #expect(symlink(named, directory.databasePath) == 0)

        let opened = Result { () throws(StoreError) in try directory.openStore(now: 1_000) }
        #expect(String(decoding: try #require(FileManager.default.contents(atPath: named)), as: UTF8.self) == contents)
        guard case .failure(.io(let path, let message)) = opened else {
            Issue.record("expected an I/O error, got \(opened)")
            return
        }
        #expect(path == directory.databasePath && message.contains("symbolic link"))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: directory.databasePath) == named)
    }

    /// Runs shorter than 32 digits (a key id, a time) stay; a longer one anywhere, even at the
    /// ends of the file, is erased; one already erased is not counted again.
    @Test func theErasureTakesRunsOf32HexDigitsOrMore() {
        let short = String(repeating: "a1", count: 15) + "f"  // 31 digits
        let long = String(repeating: "9e", count: 16)         // 32 digits
        var text = Array((long + "|" + short + "\u{1}" + long + "G" + String(repeating: "0", count: 40) + "x" + long).utf8)
        let changed = text.withUnsafeMutableBufferPointer { WrappedKeyErasure.eraseRuns(in: $0) }
        let zeros = String(repeating: "0", count: 32)
        #expect(String(decoding: text, as: UTF8.self)
                == zeros + "|" + short + "\u{1}" + zeros + "G" + String(repeating: "0", count: 40) + "x" + zeros)
        #expect(changed == 3)
        #expect(text.withUnsafeMutableBufferPointer { WrappedKeyErasure.eraseRuns(in: $0) } == 0)
    }
}
