import Glibc
import JSONCore
import LinuxIO
import Synchronization

/// A policy read from a directory of drop-in files, and the files it came from.
public struct LoadedPolicy: Sendable, Hashable {
    public var policy: Policy
    /// The file names merged, in merge order.
    public var sources: [String]

    public init(policy: Policy, sources: [String]) {
        self.policy = policy
        self.sources = sources
    }
}

/// Reads a policy directory (`policy.d`): the only file access of the policy library (through
/// LinuxIO), kept here so the daemon, the SDK's test kit and `proctorctl` read policy identically.
public enum PolicyDirectory {
    /// Reads every `*.json` file of `directoryPath` that is not a dotfile, in byte-wise
    /// lexical order of the names, parses each and merges them (`Policy.merge`). Other
    /// files are ignored, so editors' backups and `README`s may sit beside the policy.
    ///
    /// - Throws: every problem of every file (each naming its file), or one problem when
    ///   the directory is missing, unreadable, or holds no policy file.
    public static func load(_ directoryPath: String) throws(PolicyProblems) -> LoadedPolicy {
        try loadIdentified(directoryPath).policy
    }

    /// `load(_:)`, and the identity of the files as they were read (each file's status taken
    /// on the descriptor its bytes were read from).
    public static func loadIdentified(_ directoryPath: String) throws(PolicyProblems)
        -> (policy: LoadedPolicy, identity: PolicyDirectoryIdentity)
    {
        let names = try policyFileNames(in: directoryPath)
        var identity = PolicyDirectoryIdentity.Builder()
        var read: [Result<[UInt8], PolicyProblems>] = []
        var totalBytes = 0
        for name in names {
            read.append(Result { () throws(PolicyProblems) in
                let (bytes, status) = try PolicyFile.readWithStatus(directoryPath + "/" + name, source: name,
                                                                    limit: PolicyLimits.maxDocumentBytes - totalBytes)
                identity.add(name: name, status: status)
                totalBytes += bytes.count
                return bytes
            })
        }
        var fragments: [PolicyFragment] = []
        var problems: [PolicyProblem] = []
        for result in parseConcurrently(read, names: names, totalBytes: totalBytes) {
            switch result {
            case .success(let fragment): fragments.append(fragment)
            case .failure(let error): problems += error.problems
            }
        }
        guard problems.isEmpty else { throw PolicyProblems(problems) }
        return (LoadedPolicy(policy: try Policy.merge(fragments), sources: names), identity.finish())
    }

    /// The names of the policy files in `directoryPath` (`policyFileNames`) and the identity
    /// `loadIdentified` gives them, from their statuses alone, without reading them: what a
    /// start compares with the policy snapshot's key before reading anything. Nil when the
    /// directory cannot be listed or holds no policy file.
    public static func identify(_ directoryPath: String) -> (names: [String], identity: PolicyDirectoryIdentity)? {
        guard let names = try? policyFileNames(in: directoryPath) else { return nil }
        var identity = PolicyDirectoryIdentity.Builder()
        for name in names {
            // Opened as `loadIdentified` opens it (not blocking on a FIFO), its status taken, nothing read.
            let descriptor = try? FileDescriptor.open(directoryPath + "/" + name, O_RDONLY | O_NOCTTY | O_NONBLOCK)
            identity.add(name: name, status: try? descriptor?.status())
            try? descriptor?.close()
        }
        return (names, identity.finish())
    }

    /// Below this many bytes in all, the files are parsed on the calling thread: they parse in
    /// well under a millisecond, less than waking worker threads and waiting for them costs
    /// (on a busy machine, the wait for a CPU to run them on).
    static let concurrentParseMinimumBytes = 256 * 1024

    /// Parses the files read, on every CPU when there are several and enough bytes to pay for
    /// it (a fleet's 100 000 apps come as drop-ins, and parsing is the larger part of starting
    /// proctord), keeping their order. When one file holds most of the bytes (a single large
    /// policy file), the files are parsed one after the other, a large one on two threads.
    private static func parseConcurrently(_ read: [Result<[UInt8], PolicyProblems>], names: [String], totalBytes: Int)
        -> [Result<PolicyFragment, PolicyProblems>]
    {
        @Sendable func parse(_ index: Int, splitting: Bool) -> Result<PolicyFragment, PolicyProblems> {
            read[index].flatMap { bytes in
                Result { () throws(PolicyProblems) in try PolicyFragment.parse(bytes, source: names[index], splitting: splitting) }
            }
        }
        let largest = read.lazy.map { (try? $0.get().count) ?? 0 }.max() ?? 0
        guard read.count > 1, totalBytes >= concurrentParseMinimumBytes, largest * 2 <= totalBytes else {
            return read.indices.map { parse($0, splitting: true) }
        }
        let results = Mutex([Result<PolicyFragment, PolicyProblems>?](repeating: nil, count: read.count))
        WorkerPool.shared.parallelFor(read.count) { index in
            let result = parse(index, splitting: false)
            results.withLock { $0[index] = result }
        }
        return results.withLock { $0.map { $0! } }
    }

    /// Whether a file name does not start with "." and ends with `suffix`, by its bytes as the
    /// file system reads it: `hasPrefix` and `hasSuffix` compare Characters, and "." followed by
    /// a combining mark (or preceded by U+0600, a prepended mark) is one Character that is not ".".
    public static func isVisible(_ name: String, endingWith suffix: String) -> Bool {
        name.utf8.first != UInt8(ascii: ".") && name.utf8.suffix(suffix.utf8.count).elementsEqual(suffix.utf8)
    }

    /// The names of the policy files in `directoryPath`, sorted by their UTF-8 bytes.
    public static func policyFileNames(in directoryPath: String) throws(PolicyProblems) -> [String] {
        let entries: [String]
        do {
            entries = try Directory.entryNames(directoryPath)
        } catch {
            let reason = error == .noSuchFileOrDirectory ? "does not exist" : "cannot be read: \(error)"
            throw PolicyProblems([PolicyProblem(source: directoryPath, message: "policy directory \(directoryPath) \(reason)")])
        }
        let names = entries.filter { name in
            isVisible(name, endingWith: ".json") && Directory.isRegularFile(directoryPath + "/" + name)
        }
        guard !names.isEmpty else {
            throw PolicyProblems([PolicyProblem(
                source: directoryPath, message: "policy directory \(directoryPath) holds no *.json policy file")])
        }
        guard names.count <= PolicyLimits.maxFiles else {
            throw PolicyProblems([PolicyProblem(
                source: directoryPath,
                message: "found \(names.count) policy files in \(directoryPath), expected at most \(PolicyLimits.maxFiles) (PolicyLimits.maxFiles)")])
        }
        return names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }
}

/// Reading one policy file with a bound on its size, so a huge or endless file (a FIFO,
/// `/dev/zero`) is refused rather than read into memory.
public enum PolicyFile {
    /// The bytes of the file at `path`, at most `limit` of them.
    ///
    /// - Throws: a problem naming `source` when the file cannot be opened or read, or is
    ///   larger than `limit`.
    public static func read(_ path: String, source: String?, limit: Int = PolicyLimits.maxDocumentBytes) throws(PolicyProblems) -> [UInt8] {
        try readWithStatus(path, source: source, limit: limit).bytes
    }

    /// `read(_:source:limit:)`, and the file's status taken on its descriptor after reading
    /// (nil when `fstat` failed): a file rewritten in place before or while it was read shows
    /// that in its `ctime`, so the snapshot's key never pairs new bytes with an old identity.
    static func readWithStatus(_ path: String, source: String?, limit: Int) throws(PolicyProblems)
        -> (bytes: [UInt8], status: stat?)
    {
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(path, O_RDONLY | O_NOCTTY)
        } catch {
            throw PolicyProblems([PolicyProblem(source: source, message: "cannot open \(path): \(error)")])
        }
        defer { try? descriptor.close() }
        func tooLarge(_ size: String) -> PolicyProblems {
            let maximum = PolicyLimits.describe(bytes: PolicyLimits.maxDocumentBytes)
            let allowed = limit >= PolicyLimits.maxDocumentBytes ? "the \(maximum) a policy may be"
                : "the \(limit) bytes left of the \(maximum) a policy directory may hold in all"
            return PolicyProblems([PolicyProblem(source: source, location: SourceLocation(line: 1, column: 1),
                                                 message: "\(path) is \(size), more than \(allowed) (PolicyLimits.maxDocumentBytes)")])
        }
        // A regular file says its size: refuse it before reading any of it, and read it into a
        // buffer of its size (and a byte more, to see the end).
        var sizeHint: Int?
        let status = try? descriptor.status()
        if let status, (status.st_mode & S_IFMT) == S_IFREG {
            guard Int(status.st_size) <= limit else { throw tooLarge("\(status.st_size) bytes") }
            sizeHint = Int(status.st_size)
        }
        do {
            let bytes = try descriptor.readAll(limit: limit, sizeHint: sizeHint)
            return (bytes, try? descriptor.status())
        } catch {
            switch error {
            case .limitExceeded: throw tooLarge("more than \(limit) bytes")
            case .read(let errno):
                throw PolicyProblems([PolicyProblem(source: source, message: "cannot read \(path): \(errno)")])
            }
        }
    }
}

// Beside the reading that uses it: a start touches the code of this file anyway, and idle
// memory counts every page of the binary that start-up faults in.
extension PolicyDirectoryIdentity {
    /// Collects the files' statuses as `PolicyDirectory` reads them.
    struct Builder {
        /// Per file: its name, a NUL, and its status fields as 64-bit little-endian integers.
        private var encoded: [UInt8] = []
        private var isSettled = true
        private let readBegan: timespec

        init() {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            readBegan = now
        }

        /// `status` is the file's, taken on the descriptor its bytes are read from; nil when
        /// `fstat` failed, which leaves the identity unsettled, as does anything but a regular
        /// file (a FIFO's bytes change with every read, its status need not).
        mutating func add(name: String, status: stat?) {
            guard let status, status.st_mode & S_IFMT == S_IFREG else {
                isSettled = false
                return
            }
            encoded += name.utf8
            encoded.append(0)  // no file name holds one
            for field in [Int64(bitPattern: UInt64(status.st_dev)), Int64(bitPattern: UInt64(status.st_ino)), Int64(status.st_size),
                          Int64(status.st_mtim.tv_sec), Int64(status.st_mtim.tv_nsec),
                          Int64(status.st_ctim.tv_sec), Int64(status.st_ctim.tv_nsec)] {
                withUnsafeBytes(of: field.littleEndian) { encoded += $0 }
            }
            let settledBefore = readBegan.tv_sec - Int(PolicyDirectoryIdentity.settleSeconds)
            if status.st_ctim.tv_sec > settledBefore
                || (status.st_ctim.tv_sec == settledBefore && status.st_ctim.tv_nsec >= readBegan.tv_nsec)
            {
                isSettled = false
            }
        }

        func finish() -> PolicyDirectoryIdentity {
            PolicyDirectoryIdentity(digest: SHA256.hexDigest(encoded), isSettled: isSettled)
        }
    }
}
