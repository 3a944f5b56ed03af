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

    private static let policy = Policy(version: "v7", defaults: AppSettings(dlp: DLPSettings(print: .block)), apps: [
        "com.a": AppPolicy(match: MatchRule(executable: "/usr/bin/a", users: ["alice"]), config: ["k": 1]),
        "com.b": AppPolicy(state: .blocked),
    ])
    private static let underBundle = Policy(version: "b1", apps: ["com.c": AppPolicy()])

    private static func contents(bundled: Bool) -> PolicySnapshot.Contents {
        PolicySnapshot.Contents(compiled: CompiledPolicy(bundled ? underBundle : policy),
                                directory: bundled ? CompiledPolicy(policy) : nil,
                                managedAppsDigest: String(repeating: "e", count: 64))
    }

    private var withoutBundle: PolicySnapshot {
        PolicySnapshot(key: PolicySnapshot.Key(build: "01", files: snapshot.key.files, bundle: nil), sha256: snapshot.sha256)
    }

    private func decode(_ bytes: [UInt8], matching key: PolicySnapshot.Key) throws(PolicySnapshot.Unusable)
        -> (PolicySnapshot, PolicySnapshot.Contents)?
    {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(PolicySnapshot.Unusable) in try PolicySnapshot.decode(raw, matching: key) }
        }
        return try result.get()
    }

    @Test func aSnapshotReadsBackAsWritten() throws {
        let read = try #require(try decode(snapshot.encoded(Self.contents(bundled: true)), matching: snapshot.key))
        #expect(read.0 == snapshot)
        #expect(read.1.compiled.policy == Self.underBundle && read.1.directory?.policy == Self.policy)
        #expect(read.1.managedAppsDigest == String(repeating: "e", count: 64))
        let alone = try #require(try decode(withoutBundle.encoded(Self.contents(bundled: false)), matching: withoutBundle.key))
        #expect(alone.0 == withoutBundle && alone.1.compiled.policy == Self.policy && alone.1.directory == nil)
        // Made of something else: not read, and no error.
        #expect(try decode(snapshot.encoded(Self.contents(bundled: true)), matching: withoutBundle.key) == nil)

        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        #expect(try PolicySnapshot.read(from: directory.path, matching: snapshot.key) == nil)
        try snapshot.write(to: directory.path, Self.contents(bundled: true))
        #expect(try PolicySnapshot.read(from: directory.path, matching: snapshot.key)?.0 == snapshot)
        var status = stat()
        #expect(stat(PolicySnapshot.path(in: directory.path), &status) == 0 && status.st_mode & 0o777 == 0o600)
    }

    /// One policy where the key says a bundle, two where it says none: refused, checksums valid.
    @Test func aBodyThatDoesNotFitTheKeyIsRefused() {
        let oneForBundle = PolicySnapshot(key: snapshot.key, sha256: snapshot.sha256).encoded(Self.contents(bundled: false))
        #expect(throws: PolicySnapshot.Unusable.self) { try decode(oneForBundle, matching: snapshot.key) }
        let twoForNone = withoutBundle.encoded(Self.contents(bundled: true))
        #expect(throws: PolicySnapshot.Unusable.self) { try decode(twoForNone, matching: withoutBundle.key) }
    }

    /// A crash or a full disk can leave any prefix; a bad sector any byte.
    @Test func everyTruncationAndEveryChangedByteIsRefused() {
        let bytes = snapshot.encoded(Self.contents(bundled: true))
        for length in 0..<bytes.count {
            #expect(throws: PolicySnapshot.Unusable.self) { try decode(Array(bytes[..<length]), matching: snapshot.key) }
        }
        for position in bytes.indices {
            for flip: UInt8 in [0x01, 0x20, 0x80] {
                var changed = bytes
                changed[position] ^= flip
                // A flip in the key's own fields can make it another key (not read, no error).
                #expect(throws: PolicySnapshot.Unusable.self) { _ = try decode(changed, matching: snapshot.key) ?? {
                    throw PolicySnapshot.Unusable(description: "another key")
                }() }
            }
        }
        #expect(throws: PolicySnapshot.Unusable.self) { try decode(bytes + [0], matching: snapshot.key) }
    }

    /// Bytes that are not UTF-8 in the header's lines (a bad sector, another file): each line is
    /// measured in the file's bytes, not in the text it decodes to, where one such byte is three.
    @Test func aHeaderThatIsNotUTF8IsRefused() {
        let short = Array("a\nb\nc\nd\ne\nf\n".utf8)
        for header in [short + [UInt8](repeating: 0xFF, count: 40) + [0x0A],
                       short + Array("checksum ".utf8) + [UInt8](repeating: 0xC3, count: 64) + [0x0A],
                       [UInt8](repeating: 0x80, count: 20) + [0x0A] + Array("b\nc\nd\ne\nf\n".utf8) + [0xFE, 0x0A]] {
            #expect(throws: PolicySnapshot.Unusable.self) { try decode(header + [1, 2, 3], matching: snapshot.key) }
        }
    }

    @Test func aValidChecksumOverAnotherFormatIsRefused() throws {
        func withChecksum(_ text: String) -> [UInt8] {
            Array(text.utf8) + Array("checksum \(JSONCore.SHA256.hexDigest(Array(text.utf8)))\n".utf8)
        }
        let sha = String(repeating: "a", count: 64)
        let key = PolicySnapshot.Key(build: "01", files: sha, bundle: nil)
        let body = PolicySnapshot.encodeBody(Self.contents(bundled: false))
        let checksum = body.withUnsafeBytes { SnapshotChecksum.xxh64($0) }
        let hex = String(repeating: "0", count: 16 - String(checksum, radix: 16).count) + String(checksum, radix: 16)
        let good = "proctor-policy-snapshot 2\nbuild 01\nfiles \(sha)\nbundle none\nsha256 \(sha)\nbody \(body.count) \(hex)\n"
        #expect(try decode(withChecksum(good) + body, matching: key) != nil)
        for text in ["proctor-policy-snapshot 1\nbuild 01\nfiles \(sha)\nbundle none\nsha256 \(sha)\n",
                     good.replacing("snapshot 2", with: "snapshot 3"),
                     good.replacing("build 01", with: "build 0G"),
                     good.replacing("bundle none", with: "bundle x \(sha)"),
                     good.replacing("sha256 \(sha)", with: "sha256 \(sha.dropLast())"),
                     good.replacing("body \(body.count)", with: "body \(body.count + 1)"),
                     good.replacing("body \(body.count)", with: "body -\(body.count)"),
                     good.replacing(hex, with: String(hex.dropLast()))] {
            #expect(throws: PolicySnapshot.Unusable.self) { try decode(withChecksum(text) + body, matching: key) }
        }
    }

    /// The header's numbers in the one spelling proctord writes: a sign or a leading zero made
    /// a header that read as another one's (found through the `snapshot-file` fuzz target's
    /// property that a header read is the header written for what it says).
    @Test func aNumberInTheHeaderHasOneSpelling() throws {
        let bytes = snapshot.encoded(Self.contents(bundled: true))
        let lines = bytes.split(separator: UInt8(ascii: "\n"), maxSplits: 7, omittingEmptySubsequences: false)
        let body = Array(lines[7])
        func resealed(_ line: Int, _ change: (String) -> String) -> [UInt8] {
            var header = lines[..<6].map { String(decoding: $0, as: UTF8.self) }
            header[line] = change(header[line])
            let text = Array((header.joined(separator: "\n") + "\n").utf8)
            return text + Array("checksum \(JSONCore.SHA256.hexDigest(text))\n".utf8) + body
        }
        #expect(try decode(resealed(3) { $0 }, matching: snapshot.key)?.0 == snapshot)
        for changed in [resealed(3) { $0.replacing("bundle 7 ", with: "bundle +7 ") },
                        resealed(3) { $0.replacing("bundle 7 ", with: "bundle 07 ") },
                        resealed(5) { $0.replacing("body ", with: "body +") },
                        resealed(5) { $0.replacing("body ", with: "body 0") }] {
            #expect(throws: PolicySnapshot.Unusable.self) { try decode(changed, matching: snapshot.key) }
        }
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
        // Listing and taking the statuses without reading gives what reading gives.
        #expect(PolicyDirectory.identify(directory.path)?.identity == (try PolicyDirectory.loadIdentified(directory.path).identity))
        #expect(PolicyDirectory.identify(directory.path)?.names == ["00-a.json"])
        #expect(PolicyDirectory.identify(directory.path + "/none") == nil)
    }
}
