import Glibc
import JSONCore
import LinuxIO
import ProctorPolicy
@testable import ProctorDaemon
import Testing
import TestSupport

@Suite struct PolicySnapshotTests {
    private let snapshot = PolicySnapshot(
        key: PolicySnapshot.Key(build: "8e5630a852322827dabaa0cb58752c2b1badd0ad", files: String(repeating: "ab", count: 32),
                                bundle: (id: 7, sha256: String(repeating: "c", count: 64))),
        sha256: String(repeating: "d", count: 64))

    @Test func aSnapshotReadsBackAsWritten() throws {
        #expect(try PolicySnapshot(decoding: snapshot.encoded) == snapshot)
        let withoutBundle = PolicySnapshot(key: PolicySnapshot.Key(build: "01", files: snapshot.key.files, bundle: nil),
                                           sha256: snapshot.sha256)
        #expect(try PolicySnapshot(decoding: withoutBundle.encoded) == withoutBundle)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        #expect(try PolicySnapshot.read(from: directory.path) == nil)
        try snapshot.write(to: directory.path)
        #expect(try PolicySnapshot.read(from: directory.path) == snapshot)
        var status = stat()
        #expect(stat(PolicySnapshot.path(in: directory.path), &status) == 0 && status.st_mode & 0o777 == 0o600)
    }

    /// A crash or a full disk can leave any prefix; a bad sector any byte.
    @Test func everyTruncationAndEveryChangedByteIsRefused() {
        let bytes = snapshot.encoded
        for length in 0..<bytes.count {
            #expect(throws: PolicySnapshot.Unusable.self) { try PolicySnapshot(decoding: Array(bytes[..<length])) }
        }
        for position in bytes.indices {
            for flip: UInt8 in [0x01, 0x20, 0x80] {
                var changed = bytes
                changed[position] ^= flip
                #expect(throws: PolicySnapshot.Unusable.self) { try PolicySnapshot(decoding: changed) }
            }
        }
    }

    @Test func aValidChecksumOverAnotherFormatIsRefused() {
        func withChecksum(_ text: String) -> [UInt8] {
            Array(text.utf8) + Array("checksum \(JSONCore.SHA256.hexDigest(Array(text.utf8)))\n".utf8)
        }
        let sha = String(repeating: "a", count: 64)
        for text in ["proctor-policy-snapshot 2\nbuild 01\nfiles \(sha)\nbundle none\nsha256 \(sha)\n",
                     "proctor-policy-snapshot 1\nbuild 01\nfiles \(sha)\nbundle none\n",
                     "proctor-policy-snapshot 1\nbuild 0G\nfiles \(sha)\nbundle none\nsha256 \(sha)\n",
                     "proctor-policy-snapshot 1\nbuild 01\nfiles \(sha)\nbundle x \(sha)\nsha256 \(sha)\n",
                     "proctor-policy-snapshot 1\nbuild 01\nfiles \(sha)\nbundle none\nsha256 \(sha.dropLast())\n"] {
            #expect(throws: PolicySnapshot.Unusable.self) { try PolicySnapshot(decoding: withChecksum(text)) }
        }
        #expect((try? PolicySnapshot(decoding: withChecksum(
            "proctor-policy-snapshot 1\nbuild 01\nfiles \(sha)\nbundle none\nsha256 \(sha)\n"))) != nil)
    }

    @Test func theKeyNeedsABuildIDAndSettledFiles() throws {
        let build = try #require(ExecutableBuildID.current, "the test binary is linked with a build id")
        #expect(build.count >= 16 && build.allSatisfy(\.isHexDigit))
        let settled = PolicyDirectoryIdentity(digest: snapshot.key.files, isSettled: true)
        #expect(PolicySnapshot.Key.current(directory: settled, bundle: nil) == PolicySnapshot.Key(build: build, files: settled.digest,
                                                                                                  bundle: nil))
        #expect(PolicySnapshot.Key.current(directory: PolicyDirectoryIdentity(digest: settled.digest, isSettled: false),
                                           bundle: nil) == nil)
        #expect(PolicySnapshot.Key.current(directory: nil, bundle: (1, snapshot.sha256)) == nil)
        let bundled = PolicySnapshot.Key.current(directory: settled, bundle: (1, snapshot.sha256))
        #expect(bundled != PolicySnapshot.Key.current(directory: settled, bundle: (2, snapshot.sha256)))
        #expect(bundled != PolicySnapshot.Key.current(directory: settled, bundle: nil))
    }

    @Test func filesJustWrittenAreNotSettledAndEveryChangeMovesTheIdentity() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let policy = #"{"schema": 1, "version": "v1", "apps": {"a.b": {"state": "blocked"}}}"#
        _ = try directory.write("00-a.json", policy)
        let first = try PolicyDirectory.loadIdentified(directory.path).identity
        #expect(!first.isSettled)
        #expect(try PolicyDirectory.loadIdentified(directory.path).identity == first)
        usleep(20_000)  // past a tick of a coarse file-system clock (a jiffy)
        _ = try directory.write("00-a.json", policy)  // the same bytes again
        let rewritten = try PolicyDirectory.loadIdentified(directory.path).identity
        #expect(rewritten.digest != first.digest)
        _ = try directory.write("10-b.json", #"{"schema": 1, "apps": {}}"#)
        let added = try PolicyDirectory.loadIdentified(directory.path).identity
        #expect(added.digest != rewritten.digest)
        #expect(unlink(directory.path + "/10-b.json") == 0)
        #expect(try PolicyDirectory.loadIdentified(directory.path).identity.digest == rewritten.digest)
    }
}
