import Glibc
import JSONCore
import LinuxIO
import ProctorPolicy

/// `policy.snapshot` in the state directory: what proctord learnt about the policy in force
/// that it need not work out again at the next start, with what it was learnt from (the key).
/// Format 1 holds the policy's SHA-256, which otherwise costs the canonical form and the hash
/// of every app at each start (a third of the CPU of a 10 000-app start); later formats may add
/// the compiled tables.
///
/// A start uses it only when its key is the start's own: the same build of proctord (its GNU
/// build id), the same `policy.d` files (`PolicyDirectoryIdentity`: names, inodes, sizes and
/// times, settled) and the same applied bundle (row id and SHA-256). Anything else — another
/// binary, an edited, added or removed file, another bundle, a damaged or truncated file (a
/// checksum over the rest) — and the start works the policy out from JSON, as without it.
/// The file is text, one field a line:
///
///     proctor-policy-snapshot 1
///     build 8e5630a852322827dabaa0cb58752c2b1badd0ad
///     files <SHA-256 of the policy.d files' names and statuses>
///     bundle none | bundle <row id> <SHA-256 of the applied bundle>
///     sha256 <SHA-256 of the policy in force>
///     checksum <SHA-256 of the lines above>
struct PolicySnapshot: Equatable, Sendable {
    /// What the policy in force was made of.
    struct Key: Equatable, Sendable {
        /// `ExecutableBuildID.current` of the proctord that wrote it.
        var build: String
        /// `PolicyDirectoryIdentity.digest` of the `policy.d` read.
        var files: String
        /// The applied bundle's row id and SHA-256, nil without one.
        var bundle: (id: Int64, sha256: String)?

        static func == (left: Key, right: Key) -> Bool {
            left.build == right.build && left.files == right.files
                && left.bundle?.id == right.bundle?.id && left.bundle?.sha256 == right.bundle?.sha256
        }

        /// The key of a policy made of `directory` (when its files' identity is settled) and
        /// `bundle`, by this build; nil when there is none: an executable without a build id,
        /// files that changed too recently to be told apart, or no `policy.d` in the policy (a
        /// bundle alone, whose hash the store keeps).
        static func current(directory: PolicyDirectoryIdentity?, bundle: (id: Int64, sha256: String)?) -> Key? {
            guard let directory, directory.isSettled, let build = ExecutableBuildID.current else { return nil }
            return Key(build: build, files: directory.digest, bundle: bundle)
        }
    }

    static let fileName = "policy.snapshot"
    static let header = "proctor-policy-snapshot 1"
    /// Larger than any valid snapshot: a longer file is refused unread.
    static let maxBytes = 4096

    let key: Key
    /// The SHA-256 of the policy in force (`ActivePolicy.sha256`).
    let sha256: String

    // MARK: Encoding

    var encoded: [UInt8] {
        let bundle = key.bundle.map { "bundle \($0.id) \($0.sha256)" } ?? "bundle none"
        let fields = Array("\(Self.header)\nbuild \(key.build)\nfiles \(key.files)\n\(bundle)\nsha256 \(sha256)\n".utf8)
        return fields + Array("checksum \(SHA256.hexDigest(fields))\n".utf8)
    }

    /// Why a snapshot file cannot be used.
    struct Unusable: Error, CustomStringConvertible {
        let description: String
    }

    /// Parses `bytes`, checking the checksum first.
    init(decoding bytes: [UInt8]) throws(Unusable) {
        guard bytes.last == UInt8(ascii: "\n") else { throw Unusable(description: "it is truncated (no final newline)") }
        let lines = bytes.dropLast().split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        guard let checksum = lines.last, checksum.hasPrefix("checksum ") else {
            throw Unusable(description: "it has no checksum line")
        }
        let covered = Array(bytes[..<(bytes.count - checksum.utf8.count - 1)])
        guard checksum.dropFirst("checksum ".count) == SHA256.hexDigest(covered) else {
            throw Unusable(description: "its checksum does not match its content (damaged or truncated)")
        }
        guard lines.count == 6, lines[0] == Self.header else {
            throw Unusable(description: "its format is not '\(Self.header)'")
        }
        func field(_ line: Int, _ name: String) throws(Unusable) -> [Substring] {
            let words = lines[line].split(separator: " ", omittingEmptySubsequences: false)
            guard words.first == Substring(name), words.count > 1, words.dropFirst().allSatisfy(Self.isHex) else {
                throw Unusable(description: "line \(line + 1) is not '\(name) <hex>'")
            }
            return Array(words.dropFirst())
        }
        let build = try field(1, "build"), files = try field(2, "files"), sha256 = try field(4, "sha256")
        guard build.count == 1, files.count == 1, files[0].count == 64, sha256.count == 1, sha256[0].count == 64 else {
            throw Unusable(description: "its build, files or sha256 field is malformed")
        }
        let bundle: (id: Int64, sha256: String)?
        if lines[3] == "bundle none" {
            bundle = nil
        } else {
            let words = lines[3].split(separator: " ", omittingEmptySubsequences: false)
            guard words.count == 3, words[0] == "bundle", let id = Int64(words[1]), words[2].count == 64, Self.isHex(words[2]) else {
                throw Unusable(description: "line 4 is not 'bundle none' or 'bundle <row id> <sha256>'")
            }
            bundle = (id, String(words[2]))
        }
        key = Key(build: String(build[0]), files: String(files[0]), bundle: bundle)
        self.sha256 = String(sha256[0])
    }

    init(key: Key, sha256: String) {
        self.key = key
        self.sha256 = sha256
    }

    private static func isHex(_ word: Substring) -> Bool {
        !word.isEmpty && word.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }

    // MARK: The file

    static func path(in stateDirectory: String) -> String { stateDirectory + "/" + fileName }

    /// The snapshot in `stateDirectory`: nil when there is none, `Unusable` when it cannot
    /// be read or is not a valid snapshot.
    static func read(from stateDirectory: String) throws(Unusable) -> PolicySnapshot? {
        let path = path(in: stateDirectory)
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK)
        } catch .noSuchFileOrDirectory {
            return nil
        } catch {
            throw Unusable(description: "it cannot be opened: \(error)")
        }
        defer { try? descriptor.close() }
        let bytes: [UInt8]
        do {
            bytes = try descriptor.readAll(limit: maxBytes)
        } catch {
            switch error {
            case .limitExceeded: throw Unusable(description: "it is larger than \(maxBytes) bytes")
            case .read(let errno): throw Unusable(description: "it cannot be read: \(errno)")
            }
        }
        return try PolicySnapshot(decoding: bytes)
    }

    /// Replaces the snapshot in `stateDirectory` atomically (a crash leaves the old one or this
    /// one), readable by the owner only, as the rest of the state. The temporary files of
    /// writers killed before their rename go first.
    func write(to stateDirectory: String) throws(FileReplacementError) {
        AtomicFileReplacement.removeAbandonedTemporaryFiles(in: stateDirectory)
        let replacement = try AtomicFileReplacement(replacing: Self.path(in: stateDirectory), mode: 0o600)
        try replacement.write(encoded)
        try replacement.commit()
    }
}
