import Foundation
import Glibc
import LinuxIO
import ProctorCrypto
import ProctorKit
import ProctorKitTesting
import TestSupport
import Testing

@Suite struct ProtectedStorageTests {
    let directory: TemporaryDirectory
    let keySource: TestKeySource
    let storage: ProtectedStorage

    init() throws {
        directory = try TemporaryDirectory(prefix: "protected-storage")
        keySource = try TestKeySource()
        storage = try ProtectedStorage(dataDirectory: directory.path, keySource: keySource)
    }

    var protectedDirectory: String { directory.path + "/protected" }
    func fileBytes(_ name: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: protectedDirectory + "/" + name))) }
    func replaceFile(_ name: String, with bytes: [UInt8]) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: protectedDirectory + "/" + name))
    }
    static let chunk = 64 * 1024, headerSize = 45, overhead = 17

    // Up to 9 chunks: one write batch (4 chunks) and several, through both of the writer's buffers.
    @Test(arguments: [0, 1, 100, chunk - 1, chunk, chunk + 1, 3 * chunk + 5, 4 * chunk, 9 * chunk + 5])
    func roundTrip(size: Int) throws {
        let content = Data(try SecureRandom.bytes(count: size))
        try storage.write(content, to: "file")
        #expect(try storage.read("file") == content)
        // An empty file still has its (empty) final chunk; a full last chunk carries FINAL itself.
        let chunks = max(1, (size + Self.chunk - 1) / Self.chunk)
        #expect(try fileBytes("file").count == Self.headerSize + size + chunks * Self.overhead)
    }

    /// A commit waits for the writing thread's last batch but not for the thread to end: files
    /// written back to back, each over several batches, are each whole and each their own,
    /// whatever the previous file's thread is still doing.
    @Test func filesWrittenBackToBackAreEachWhole() throws {
        var contents: [Data] = []
        for index in 0..<8 {
            let content = Data(try SecureRandom.bytes(count: 9 * Self.chunk + index))
            try storage.write(content, to: "file\(index % 2)")
            #expect(try storage.read("file\(index % 2)") == content)
            contents.append(content)
        }
        #expect(try storage.read("file0") == contents[6])
        #expect(try storage.read("file1") == contents[7])
        #expect(try FileManager.default.contentsOfDirectory(atPath: protectedDirectory).sorted() == ["file0", "file1"])
    }

    @Test func streamingWriterAndReaderRoundTripInPieces() throws {
        let content = try SecureRandom.bytes(count: 5 * Self.chunk + 123)
        let writer = try storage.writer(for: "large.bin")
        var offset = 0
        for piece in [1, 7000, Self.chunk, 3, 200_000, content.count] where offset < content.count {
            let end = min(offset + piece, content.count)
            try writer.write(Data(content[offset..<end]))
            offset = end
        }
        #expect(try storage.names() == [])  // nothing visible before commit
        try writer.commit()
        let reader = try storage.reader(for: "large.bin")
        var read: [UInt8] = []
        while let chunk = try reader.next() {
            #expect(chunk.count <= Self.chunk)
            read += chunk
        }
        #expect(read == content)
        #expect(try reader.next() == nil)
    }

    @Test func noPlaintextReachesTheDisk() throws {
        let secret = "launched at 2026-11-30T13:00:00Z, patient record 4711"
        try storage.write(Data(String(repeating: secret, count: 50).utf8), to: "notes")
        let bytes = try fileBytes("notes")
        #expect(Array(bytes.prefix(5)) == Array("PKPS".utf8) + [1])
        for needle in [secret, "launched", "4711"] {
            #expect(bytes.firstRange(of: Array(needle.utf8)) == nil, "\(needle) found on disk")
        }
        #expect(try fileMode(protectedDirectory + "/notes") == 0o600)
        #expect(try fileMode(protectedDirectory) == 0o700)
    }

    @Test func everyFlippedByteFailsToReadAndReturnsNothing() throws {
        let content = Data(try SecureRandom.bytes(count: Self.chunk + 10))
        try storage.write(content, to: "doc")
        let original = try fileBytes("doc")
        let keyID = try keySource.dataKey().keyID
        for index in [0, 4, 5, 20, 21, 44, 45, 1000, Self.headerSize + Self.chunk + Self.overhead, original.count - 1] {
            var altered = original
            altered[index] ^= 0x04
            try replaceFile("doc", with: altered)
            do {
                _ = try storage.read("doc")
                Issue.record("a flipped byte at \(index) was read")
            } catch {
                switch (index, error) {
                case (0..<4, .notAProtectedFile("doc")), (4, .unsupportedVersion("doc", version: 5)): break
                case (5..<21, .encryptedWithAnotherKey("doc", _, keyID)): break
                case (21..., .damaged("doc", .authenticationFailed)): break
                default: Issue.record("flipped byte \(index): unexpected \(error)")
                }
            }
        }
        try replaceFile("doc", with: original)
        #expect(try storage.read("doc") == content)
    }

    @Test func truncatedOrExtendedFilesFailToRead() throws {
        try storage.write(Data(try SecureRandom.bytes(count: 2 * Self.chunk + 10)), to: "doc")
        let original = try fileBytes("doc")
        let fullChunk = Self.chunk + Self.overhead
        let cases: [(Int, ProtectedStorageError)] = [
            (original.count - 1, .damaged("doc", .authenticationFailed(what: "stream chunk 3"))),
            (Self.headerSize + 2 * fullChunk, .damaged("doc", .truncatedStream(chunksRead: 2))),
            (Self.headerSize + fullChunk, .damaged("doc", .truncatedStream(chunksRead: 1))),
            (Self.headerSize + 10, .damaged("doc", .authenticationFailed(what: "stream chunk 1 (10 bytes, shorter than its MAC)"))),
            (Self.headerSize + 100, .damaged("doc", .authenticationFailed(what: "stream chunk 1"))),
            (Self.headerSize, .damaged("doc", .truncatedStream(chunksRead: 0))),
            (30, .damaged("doc", .truncatedStream(chunksRead: 0))),
            (3, .notAProtectedFile("doc")),
            (0, .notAProtectedFile("doc")),
        ]
        for (length, expected) in cases {
            try replaceFile("doc", with: Array(original.prefix(length)))
            #expect(throws: expected, "cut to \(length) bytes") { try storage.read("doc") }
        }
        // A byte appended to a short final chunk makes it fail; after a full final chunk it is extra data.
        try replaceFile("doc", with: original + [0])
        #expect(throws: ProtectedStorageError.damaged("doc", .authenticationFailed(what: "stream chunk 3"))) { try storage.read("doc") }
        try storage.write(Data(try SecureRandom.bytes(count: Self.chunk)), to: "full")
        try replaceFile("full", with: try fileBytes("full") + [0])
        #expect(throws: ProtectedStorageError.damaged("full", .dataAfterFinalChunk)) { try storage.read("full") }
    }

    @Test func aFileMovedToAnotherNameFailsToRead() throws {
        try storage.write(Data("for a".utf8), to: "a")
        try storage.write(Data("for b".utf8), to: "b")
        try replaceFile("b", with: try fileBytes("a"))
        #expect(throws: ProtectedStorageError.damaged("b", .authenticationFailed(what: "stream chunk 1"))) { try storage.read("b") }
    }

    @Test func anotherOrDestroyedKeyCannotRead() throws {
        try storage.write(Data("org data".utf8), to: "doc")
        let rotated = try TestKeySource()
        let other = try ProtectedStorage(dataDirectory: directory.path, keySource: rotated)
        #expect(throws: ProtectedStorageError.encryptedWithAnotherKey("doc", fileKeyID: try keySource.dataKey().keyID,
                                                                      currentKeyID: try rotated.dataKey().keyID)) {
            try other.read("doc")
        }
        // Same key id in the header but another key (a forged header): authentication fails.
        var forged = try fileBytes("doc")
        forged.replaceSubrange(5..<21, with: Array(try rotated.dataKey().keyID.utf8))
        try replaceFile("doc", with: forged)
        #expect(throws: ProtectedStorageError.damaged("doc", .authenticationFailed(what: "stream chunk 1"))) { try other.read("doc") }
        keySource.destroyKey()
        #expect(throws: ProtectedStorageError.keyUnavailable(reason: "the test key was destroyed")) { try storage.read("doc") }
    }

    @Test func namesListsProtectedFilesOnlyAndBadNamesAreRefused() throws {
        for name in ["b", "a", "report 2026.pdf", "ünïcode"] { try storage.write(Data(name.utf8), to: name) }
        mkdir(protectedDirectory + "/subdirectory", 0o700)
        #expect(try storage.names() == ["a", "b", "report 2026.pdf", "ünïcode"])
        try storage.remove("b")
        #expect(try storage.names() == ["a", "report 2026.pdf", "ünïcode"])
        #expect(throws: ProtectedStorageError.noSuchFile("b")) { try storage.remove("b") }
        #expect(throws: ProtectedStorageError.noSuchFile("b")) { try storage.read("b") }
        let bad: [(String, String)] = [
            ("", "it is empty"), (".", "it starts with \".\""), ("..", "it starts with \".\""),
            ("../escape", "it starts with \".\""), ("a/b", "it contains \"/\""), ("a\nb", "it contains a control character"),
            (String(repeating: "x", count: 201), "it is longer than 200 bytes"),
        ]
        for (name, reason) in bad {
            #expect(throws: ProtectedStorageError.invalidName(name, reason: reason)) { try storage.write(Data(), to: name) }
            #expect(throws: ProtectedStorageError.invalidName(name, reason: reason)) { try storage.read(name) }
        }
        #expect(throws: ProtectedStorageError.notConfigured) { try ProtectedStorage().names() }
    }

    /// "/" followed by a combining mark is one Character that is not "/", "." followed by one is
    /// not "."; the file system reads bytes: a name is checked by its bytes.
    @Test func aSlashOrALeadingDotBeforeACombiningMarkIsRefused() throws {
        mkdir(protectedDirectory + "/subdirectory", 0o700)
        for (name, reason) in [("subdirectory/\u{301}x", "it contains \"/\""), (".\u{301}x", "it starts with \".\"")] {
            #expect(throws: ProtectedStorageError.invalidName(name, reason: reason)) { try storage.write(Data("org".utf8), to: name) }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: protectedDirectory + "/subdirectory") == [])
    }

    @Test func anUncommittedWriteLeavesTheOldContentAndNoTemporaryFile() throws {
        try storage.write(Data("version 1".utf8), to: "doc")
        do {
            let writer = try storage.writer(for: "doc")
            try writer.write(Data("version 2".utf8))
        }
        do {
            let writer = try storage.writer(for: "doc")
            try writer.write(Data(repeating: 0x41, count: 1 << 20))  // several batches: the writing thread ran
        }
        #expect(try storage.read("doc") == Data("version 1".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: protectedDirectory) == ["doc"])
    }

    /// A write that fails on the writer's background thread (EFBIG past RLIMIT_FSIZE, set in a
    /// child so the limit binds no other test) fails the write with that error, and every write
    /// and the commit after it too, and leaves the old content and no temporary file.
    @Test func aFailedBackgroundWriteFailsTheWriteAndLeavesTheOldContent() throws {
        try storage.write(Data("version 1".utf8), to: "doc")
        let content = Data(try SecureRandom.bytes(count: 2 << 20))
        let child = fork()
        if child == 0 {
            signal(SIGXFSZ, SIG_IGN)
            var limit = rlimit(rlim_cur: 1 << 20, rlim_max: rlim_t.max)
            guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0 else { _exit(3) }
            guard let writer = try? storage.writer(for: "doc") else { _exit(4) }
            do { try writer.write(content); _exit(1) }
            catch .system(operation: "write", path: _, errno: EFBIG) {}
            catch { _exit(2) }
            do { try writer.write(content); _exit(7) }  // the writer stays failed
            catch .system(operation: "write", path: _, errno: EFBIG) {}
            catch { _exit(8) }
            do { try writer.commit(); _exit(5) }
            catch .system(operation: "write", path: _, errno: EFBIG) { _exit(0) }
            catch { _exit(6) }
        }
        var status: CInt = 0
        #expect(waitpid(child, &status, 0) == child && status == 0)
        #expect(try storage.read("doc") == Data("version 1".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: protectedDirectory) == ["doc"])
    }

    /// A writer process that dies before committing leaves its temporary file; the file is not
    /// a protected file, the old content stays, and the next configuration removes it.
    @Test func aCrashedWritersTemporaryFileIsIgnoredThenCleanedUp() throws {
        try storage.write(Data("version 1".utf8), to: "doc")
        let child = fork()
        if child == 0 {
            let writer = try? storage.writer(for: "doc")
            try? writer?.write(Data(repeating: 0x41, count: 100_000))
            _exit(writer == nil ? 1 : 0)  // no commit, no cleanup: as if killed
        }
        var status: CInt = 0
        #expect(waitpid(child, &status, 0) == child && status == 0)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: protectedDirectory).filter { $0 != "doc" }
        #expect(leftovers.count == 1 && leftovers[0].hasPrefix(".tmp.\(child)."))
        #expect(try storage.names() == ["doc"])
        #expect(try storage.read("doc") == Data("version 1".utf8))
        try storage.configure(dataDirectory: directory.path, keySource: keySource)
        #expect(try FileManager.default.contentsOfDirectory(atPath: protectedDirectory) == ["doc"])
    }
}

private func fileMode(_ path: String) throws -> mode_t {
    var status = stat()
    guard stat(path, &status) == 0 else { throw Errno.current }
    return status.st_mode & 0o7777
}
