import Glibc
import JSONCore
import LinuxIO
import ProctorPolicy

/// `policy.snapshot` in the state directory: the policy in force, compiled, with what it was
/// made of (the key), so that a restart on the same files, bundle and binary reads it back
/// instead of reading, parsing, compiling and hashing the policy's JSON.
///
/// A start uses it only when its key is the start's own: the same build of proctord (its GNU
/// build id), the same `policy.d` files (`PolicyDirectoryIdentity`: names, inodes, sizes and
/// times, settled) and the same applied bundle (row id and SHA-256). Anything else — another
/// binary, an edited, added or removed file, another bundle, another format, a damaged or
/// truncated file, a body that does not check out — and the start works the policy out from
/// JSON, as without it. The file is a text header, one field a line, then the binary body:
///
///     proctor-policy-snapshot 2
///     build 8e5630a852322827dabaa0cb58752c2b1badd0ad
///     files <SHA-256 of the policy.d files' names and statuses>
///     bundle none | bundle <row id> <SHA-256 of the applied bundle>
///     sha256 <SHA-256 of the policy in force>
///     body <length in bytes> <XXH64 of the body, 16 hex digits>
///     checksum <SHA-256 of the lines above>
///     <body: `PolicySnapshot.Contents`>
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
    static let format = "proctor-policy-snapshot 2"
    /// Longer than any valid header: a header is looked for in this many bytes at most.
    static let maxHeaderBytes = 4096
    /// Larger than any valid snapshot (two compiled policies of `PolicyLimits.maxApps` apps
    /// and `PolicyLimits.maxDocumentBytes` of text each): a larger file is refused unread.
    static let maxBytes = 1 << 30

    let key: Key
    /// The SHA-256 of the policy in force (`ActivePolicy.sha256`).
    let sha256: String

    /// What the body holds: everything `ActivePolicy` keeps but its file names and time.
    struct Contents: Sendable {
        /// The policy in force (`ActivePolicy.compiled`).
        let compiled: CompiledPolicy
        /// `policy.d` compiled alone when a bundle lies over it; nil when `compiled` is
        /// `policy.d`'s own.
        let directory: CompiledPolicy?
        /// `ActivePolicy.managedAppsDigest`.
        let managedAppsDigest: String
    }

    /// Why a snapshot file cannot be used.
    struct Unusable: Error, CustomStringConvertible {
        let description: String
    }

    // MARK: The header

    /// The header, for a body of `bodyLength` bytes whose XXH64 is `bodyChecksum`.
    func header(bodyLength: Int, bodyChecksum: UInt64) -> [UInt8] {
        let bundle = key.bundle.map { "bundle \($0.id) \($0.sha256)" } ?? "bundle none"
        let checksum = String(bodyChecksum, radix: 16)
        let fields = Array(("\(Self.format)\nbuild \(key.build)\nfiles \(key.files)\n\(bundle)\nsha256 \(sha256)\n"
            + "body \(bodyLength) \(String(repeating: "0", count: 16 - checksum.count) + checksum)\n").utf8)
        return fields + Array("checksum \(SHA256.hexDigest(fields))\n".utf8)
    }

    /// A header read from the start of a file: the snapshot's key and hash, and what the body
    /// after it must be.
    struct Header {
        let snapshot: PolicySnapshot
        /// The header's own length: where the body starts.
        let length: Int
        let bodyLength: Int
        let bodyChecksum: UInt64
    }

    /// The header at the start of `bytes`, its checksum checked first.
    static func decodeHeader(_ bytes: UnsafeRawBufferPointer) throws(Unusable) -> Header {
        var lines: [String] = []
        var lineStart = 0, checksumLineStart = 0
        for (offset, byte) in bytes.prefix(maxHeaderBytes).enumerated() where byte == UInt8(ascii: "\n") {
            lines.append(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[lineStart..<offset]), as: UTF8.self))
            (checksumLineStart, lineStart) = (lineStart, offset + 1)
            if lines.count == 7 { break }
        }
        guard lines.count == 7 else {
            throw Unusable(description: lines.first == Self.format || lines.isEmpty
                ? "it is truncated (its header ends early)" : "its format is not '\(Self.format)'")
        }
        let checksum = lines[6]
        // The lines above the checksum's, in the file's bytes: bytes that are not UTF-8 decode
        // to longer text (three bytes each), so the text's length cannot say where they end.
        let covered = Array(bytes[..<checksumLineStart])
        guard checksum.hasPrefix("checksum "), checksum.dropFirst("checksum ".count) == SHA256.hexDigest(covered) else {
            throw Unusable(description: lines[0] == Self.format
                ? "its header's checksum does not match it (damaged or truncated)" : "its format is not '\(Self.format)'")
        }
        guard lines[0] == Self.format else { throw Unusable(description: "its format is not '\(Self.format)'") }
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
            guard words.count == 3, words[0] == "bundle", let id = Self.decimal(words[1]), words[2].count == 64, Self.isHex(words[2]) else {
                throw Unusable(description: "line 4 is not 'bundle none' or 'bundle <row id> <sha256>'")
            }
            bundle = (id, String(words[2]))
        }
        let body = lines[5].split(separator: " ", omittingEmptySubsequences: false)
        guard body.count == 3, body[0] == "body", let bodyLength = Self.decimal(body[1]).flatMap(Int.init(exactly:)), body[2].count == 16,
              Self.isHex(body[2]), let bodyChecksum = UInt64(body[2], radix: 16) else {
            throw Unusable(description: "line 6 is not 'body <length> <XXH64>'")
        }
        let key = Key(build: String(build[0]), files: String(files[0]), bundle: bundle)
        return Header(snapshot: PolicySnapshot(key: key, sha256: String(sha256[0])), length: lineStart,
                      bodyLength: bodyLength, bodyChecksum: bodyChecksum)
    }

    init(key: Key, sha256: String) {
        self.key = key
        self.sha256 = sha256
    }

    /// `word` as `header` writes a number: decimal digits, no sign, no leading zero. A header
    /// is read only in the spelling proctord writes, so no two headers say the same thing.
    private static func decimal(_ word: Substring) -> Int64? {
        guard word.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              word == "0" || word.utf8.first != UInt8(ascii: "0") else { return nil }
        return Int64(word)
    }

    private static func isHex(_ word: Substring) -> Bool {
        !word.isEmpty && word.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }

    // MARK: The body

    static func encodeBody(_ contents: Contents) -> [UInt8] {
        var encoder = SnapshotEncoder(reservingCapacity: 64 * contents.compiled.appCount * (contents.directory == nil ? 3 : 6))
        encoder.append(contents.directory == nil ? 1 : 2)
        contents.compiled.encodeSnapshot(into: &encoder)
        contents.directory?.encodeSnapshot(into: &encoder)
        encoder.append(contents.managedAppsDigest)
        return encoder.bytes
    }

    /// The contents of `body` (its checksum already checked), every part of it checked.
    static func decodeBody(_ body: UnsafeRawBufferPointer) throws(Unusable) -> Contents {
        var decoder = SnapshotDecoder(body)
        do throws(SnapshotDamage) {
            let count = try decoder.readInt("the number of policies", limit: 2)
            guard count >= 1 else { throw SnapshotDamage("it holds no policy") }
            let compiled = try CompiledPolicy(decodingSnapshot: &decoder)
            let directory = count == 2 ? try CompiledPolicy(decodingSnapshot: &decoder) : nil
            let digest = try decoder.readString("the managed apps' digest")
            guard digest.utf8.count == 64, isHex(Substring(digest)) else { throw SnapshotDamage("the managed apps' digest is malformed") }
            guard decoder.isAtEnd else { throw SnapshotDamage("bytes follow the last part at byte \(decoder.offset)") }
            return Contents(compiled: compiled, directory: directory, managedAppsDigest: digest)
        } catch {
            throw Unusable(description: "its body does not check out: \(error)")
        }
    }

    // MARK: The file

    static func path(in stateDirectory: String) -> String { stateDirectory + "/" + fileName }

    /// The snapshot in `stateDirectory` and its contents when its key is `key`: nil when there
    /// is none or it was made of something else, `Unusable` when it cannot be read or is not a
    /// valid snapshot. The file is mapped, not read into a buffer, and unmapped before this
    /// returns: what the policy keeps is copied out of it.
    static func read(from stateDirectory: String, matching key: Key) throws(Unusable) -> (PolicySnapshot, Contents)? {
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
        let status: stat, file: MappedFile
        do { status = try descriptor.status() } catch { throw Unusable(description: "its status cannot be read: \(error)") }
        guard status.st_mode & S_IFMT == S_IFREG else { throw Unusable(description: "it is not a regular file") }
        guard status.st_size <= maxBytes else { throw Unusable(description: "it is larger than \(maxBytes) bytes") }
        do { file = try MappedFile(descriptor, size: Int(status.st_size)) } catch {
            throw Unusable(description: "it cannot be mapped: \(error)")
        }
        return try decode(file.bytes, matching: key) { file.populate() }
    }

    /// The snapshot in `bytes` (a whole file) and its contents when its key is `key`; nil when
    /// it was made of something else. `willReadBody` runs once the key matched, before the
    /// body is read.
    static func decode(_ bytes: UnsafeRawBufferPointer, matching key: Key, willReadBody: () -> Void = {}) throws(Unusable)
        -> (PolicySnapshot, Contents)?
    {
        let header = try decodeHeader(bytes)
        guard header.snapshot.key == key else { return nil }
        guard bytes.count - header.length == header.bodyLength else {
            throw Unusable(description: "its body is \(bytes.count - header.length) bytes, its header says \(header.bodyLength)")
        }
        willReadBody()
        let body = UnsafeRawBufferPointer(rebasing: bytes[header.length...])
        guard SnapshotChecksum.xxh64(body) == header.bodyChecksum else {
            throw Unusable(description: "its body's checksum does not match it (damaged)")
        }
        let contents = try decodeBody(body)
        guard (contents.directory == nil) == (key.bundle == nil) else {
            throw Unusable(description: "its body holds \(contents.directory == nil ? "one policy" : "two policies") for "
                + (key.bundle == nil ? "no bundle" : "a bundle"))
        }
        return (header.snapshot, contents)
    }

    /// The whole file: the header, then the body.
    func encoded(_ contents: Contents) -> [UInt8] {
        let body = Self.encodeBody(contents)
        return body.withUnsafeBytes { header(bodyLength: $0.count, bodyChecksum: SnapshotChecksum.xxh64($0)) } + body
    }

    /// Replaces the snapshot in `stateDirectory` atomically (a crash leaves the old one or this
    /// one), readable by the owner only, as the rest of the state. The temporary files of
    /// writers killed before their rename go first.
    func write(to stateDirectory: String, _ contents: Contents) throws(FileReplacementError) {
        let bytes = encoded(contents)
        AtomicFileReplacement.removeAbandonedTemporaryFiles(in: stateDirectory)
        let replacement = try AtomicFileReplacement(replacing: Self.path(in: stateDirectory), mode: 0o600)
        try replacement.write(bytes)
        try replacement.commit()
    }
}
