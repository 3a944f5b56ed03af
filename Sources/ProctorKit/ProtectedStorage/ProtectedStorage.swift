public import Foundation
import Glibc
import LinuxIO
import ProctorCrypto
import Synchronization

/// The app's managed files, encrypted at rest with the app's data key.
///
/// Files live flat in `<data directory>/protected/`, one file per name, each encrypted and
/// authenticated as a stream of 64 KiB chunks (libsodium's secretstream, see docs/crypto.md). A
/// file altered, truncated, renamed or encrypted under another key fails to read with a clear
/// error and nothing of it is returned. Writes replace a file atomically and durably.
///
/// Names are stored in plaintext (they are the files' names on disk) but authenticated with the
/// content: keep secrets out of names. This keeps listing and removal possible without the key
/// and the format simple; the content is what the key protects.
///
/// Thread-safe: operations on different names may run concurrently; concurrent writes of one name
/// leave one of them, whole.
public final class ProtectedStorage: Sendable {
    /// The app's protected storage; `PolicyApplication` configures it before `didFinishLaunching`.
    public static let shared = ProtectedStorage()

    private struct Configuration: Sendable {
        let directory: String
        let keySource: any ProtectedStorageKeySource
    }

    private let configuration = Mutex<Configuration?>(nil)

    /// Storage that must be configured before use (`shared` is one).
    public init() {}

    /// Storage under `dataDirectory`/protected, configured at once.
    public convenience init(dataDirectory: String, keySource: any ProtectedStorageKeySource) throws(ProtectedStorageError) {
        self.init()
        try configure(dataDirectory: dataDirectory, keySource: keySource)
    }

    /// Keeps the files in `dataDirectory`/protected (created, mode 0700, if missing) and takes the
    /// key from `keySource`. Removes temporary files that crashed writers left behind.
    public func configure(dataDirectory: String, keySource: any ProtectedStorageKeySource) throws(ProtectedStorageError) {
        let directory = dataDirectory + "/protected"
        if mkdir(directory, 0o700) != 0, errno != EEXIST {
            throw .system(operation: "create directory", path: directory, errno: Errno.current.rawValue)
        }
        AtomicFileReplacement.removeAbandonedTemporaryFiles(in: directory)
        configuration.withLock { $0 = Configuration(directory: directory, keySource: keySource) }
    }

    /// The directory holding the protected files, once configured.
    public var directory: String? { configuration.withLock { $0?.directory } }

    /// Replaces (or creates) the file `name` with `data`, encrypted; durable when this returns.
    public func write(_ data: Data, to name: String) throws(ProtectedStorageError) {
        let writer = try writer(for: name)
        try writer.write(data)
        try writer.commit()
    }

    /// The whole decrypted content of `name`, returned only once every chunk has been
    /// authenticated up to the final one.
    public func read(_ name: String) throws(ProtectedStorageError) -> Data {
        let reader = try reader(for: name)
        let overhead = ProtectedFileFormat.headerSize + SecretStream.chunkOverhead
        var content = Data(capacity: max(reader.fileSize - overhead, 0))
        do {
            try reader.forEachChunk { chunk in
                // Data's pointer-and-count append is one memcpy; the Sequence one goes byte by byte.
                if let base = chunk.baseAddress { content.append(base.assumingMemoryBound(to: UInt8.self), count: chunk.count) }
            }
        } catch {
            content.resetBytes(in: 0..<content.count)  // no partial plaintext left in freed memory
            throw error
        }
        return content
    }

    /// Removes the file `name`; `.noSuchFile` if there is none.
    public func remove(_ name: String) throws(ProtectedStorageError) {
        let (path, directory) = try location(of: name)
        guard unlink(path) == 0 else {
            if errno == ENOENT { throw .noSuchFile(name) }
            throw .system(operation: "remove", path: path, errno: Errno.current.rawValue)
        }
        do { try AtomicFileReplacement.syncDirectory(directory) }
        catch { throw .system(operation: error.operation, path: error.path, errno: error.errno.rawValue) }
    }

    /// The names of the protected files, sorted.
    public func names() throws(ProtectedStorageError) -> [String] {
        let directory = try configured().directory
        guard let stream = opendir(directory) else { throw .system(operation: "open directory", path: directory, errno: Errno.current.rawValue) }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            guard entry.pointee.d_type == DT_REG || entry.pointee.d_type == DT_UNKNOWN else { continue }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if (try? ProtectedFileFormat.validate(name)) != nil { names.append(name) }
        }
        return names.sorted()
    }

    /// A writer that replaces `name` with what it is given once it is committed.
    public func writer(for name: String) throws(ProtectedStorageError) -> ProtectedFileWriter {
        let (path, _) = try location(of: name)
        return try ProtectedFileWriter(name: name, path: path, key: configured().keySource.dataKey())
    }

    /// A reader of `name`'s content, chunk by chunk, each authenticated before it is returned.
    public func reader(for name: String) throws(ProtectedStorageError) -> ProtectedFileReader {
        let (path, _) = try location(of: name)
        return try ProtectedFileReader(name: name, path: path, key: configured().keySource.dataKey())
    }

    private func configured() throws(ProtectedStorageError) -> Configuration {
        guard let configuration = configuration.withLock({ $0 }) else { throw .notConfigured }
        return configuration
    }

    private func location(of name: String) throws(ProtectedStorageError) -> (path: String, directory: String) {
        try ProtectedFileFormat.validate(name)
        let directory = try configured().directory
        return (directory + "/" + name, directory)
    }
}
