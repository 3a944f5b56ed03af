public import Glibc

/// Why a file could not be replaced: which step, on which path, and the errno.
public struct FileReplacementError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The step that failed: `"create"`, `"write"`, `"fsync"`, `"rename"`, …
    public let operation: String
    /// The path the step worked on.
    public let path: String
    /// What the kernel reported.
    public let errno: Errno

    public init(operation: String, path: String, errno: Errno) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    public var description: String { "\(operation) \(path): \(errno)" }
}

/// Replaces a file's whole content atomically: the new content goes into a temporary file beside
/// the destination (created with `O_EXCL | O_CLOEXEC`), which `commit()` flushes (`fsync`), renames
/// over the destination and makes durable by flushing the directory. A reader sees the old file or
/// the new one, never a mix; after a crash the destination is the old file or the new one, and at
/// most an abandoned temporary file is left behind (`removeAbandonedTemporaryFiles(in:)`).
///
/// A replacement that is neither committed nor discarded removes its temporary file when it is
/// deinitialised.
public final class AtomicFileReplacement {
    /// The prefix of every temporary file's name: `.tmp.<pid>.<random>.<destination name>`. The
    /// leading dot keeps it apart from names that callers validate to not start with one.
    public static let temporaryPrefix = ".tmp."

    /// The file that `commit()` replaces.
    public let destination: String
    /// The temporary file holding the new content until `commit()`.
    public let temporaryPath: String
    private let directory: String
    private let descriptor: FileDescriptor
    private var isFinished = false
    private var writtenCount: Int64 = 0     // bytes written so far
    private var writebackOffset: Int64 = 0  // where the next startWriteback() range begins

    /// Creates the temporary file beside `destination` with `mode` (before the umask).
    public init(replacing destination: String, mode: mode_t) throws(FileReplacementError) {
        self.destination = destination
        let slash = destination.lastIndex(of: "/")
        directory = slash.map { $0 == destination.startIndex ? "/" : String(destination[..<$0]) } ?? "."
        let name = slash.map { String(destination[destination.index(after: $0)...]) } ?? destination
        var generator = SystemRandomNumberGenerator()
        while true {
            let unique = String(generator.next() as UInt64, radix: 16)
            let candidate = "\(directory)/\(Self.temporaryPrefix)\(getpid()).\(unique).\(name)"
            do {
                descriptor = try FileDescriptor.open(candidate, O_WRONLY | O_CREAT | O_EXCL, mode: mode)
                temporaryPath = candidate
                return
            } catch where error == .fileExists {
                continue  // a 64-bit collision: draw again
            } catch {
                throw FileReplacementError(operation: "create", path: candidate, errno: error)
            }
        }
    }

    deinit { if !isFinished { discard() } }

    /// Appends all of `bytes` to the new content.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(FileReplacementError) {
        precondition(!isFinished, "write after commit or discard")
        var offset = 0
        while offset < bytes.count {
            do { offset += try Syscall.write(descriptor.rawValue, UnsafeRawBufferPointer(rebasing: bytes[offset...])) }
            catch { throw FileReplacementError(operation: "write", path: temporaryPath, errno: error) }
        }
        writtenCount += Int64(bytes.count)
    }

    /// Starts the disk writing what was written so far, without waiting for it
    /// (`sync_file_range`, `SYNC_FILE_RANGE_WRITE`): a writer that produces its content over time
    /// overlaps the disk's work with its own, and `commit()`'s `fsync` has less left to wait for.
    /// A hint only, so its errors are ignored: an I/O error it meets is reported again by
    /// `commit()`'s `fsync`.
    public func startWriteback() {
        precondition(!isFinished, "writeback after commit or discard")
        guard writtenCount > writebackOffset else { return }
        try? Syscall.startWriteback(descriptor.rawValue, offset: writebackOffset, count: writtenCount - writebackOffset)
        writebackOffset = writtenCount
    }

    /// Appends all of `bytes` to the new content.
    public func write(_ bytes: [UInt8]) throws(FileReplacementError) {
        try bytes.withUnsafeBytes { raw in Result { () throws(FileReplacementError) in try write(raw) } }.get()
    }

    /// Flushes the new content, renames it over the destination and flushes the directory, so the
    /// replacement survives a crash once this returns. If the flush or the rename fails, the
    /// temporary file is removed and the destination is unchanged; if only the directory's flush
    /// fails, the new content is in place but might not survive a crash.
    public func commit() throws(FileReplacementError) {
        precondition(!isFinished, "commit after commit or discard")
        do throws(FileReplacementError) {
            try Self.step("fsync", temporaryPath) { fsync(descriptor.rawValue) }
            isFinished = true
            try? descriptor.close()
            try Self.step("rename", temporaryPath) { rename(temporaryPath, destination) }
        } catch {
            if !isFinished { try? descriptor.close() }
            isFinished = true
            unlink(temporaryPath)
            throw error
        }
        try Self.syncDirectory(directory)
    }

    /// Drops the new content: closes and removes the temporary file. The destination is unchanged.
    public func discard() {
        guard !isFinished else { return }
        isFinished = true
        try? descriptor.close()
        unlink(temporaryPath)
    }

    /// Flushes `directory` itself, so a rename or unlink in it is durable.
    public static func syncDirectory(_ directory: String) throws(FileReplacementError) {
        let handle: FileDescriptor
        do { handle = try FileDescriptor.open(directory, O_RDONLY | O_DIRECTORY) }
        catch { throw FileReplacementError(operation: "open directory", path: directory, errno: error) }
        defer { try? handle.close() }
        try step("fsync directory", directory) { fsync(handle.rawValue) }
    }

    /// Removes the temporary files in `directory` whose writer process is gone (it crashed or was
    /// killed before committing); those of live processes are left alone. Returns the paths
    /// removed.
    @discardableResult
    public static func removeAbandonedTemporaryFiles(in directory: String) -> [String] {
        guard let stream = opendir(directory) else { return [] }
        defer { closedir(stream) }
        var removed: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name.hasPrefix(temporaryPrefix),
                  let writer = pid_t(name.dropFirst(temporaryPrefix.count).prefix { $0 != "." }),
                  writer > 0, !isRunning(writer) else { continue }
            let path = "\(directory)/\(name)"
            if unlink(path) == 0 { removed.append(path) }
        }
        return removed
    }

    private static func isRunning(_ process: pid_t) -> Bool {
        kill(process, 0) == 0 || errno == EPERM
    }

    private static func step(_ operation: String, _ path: String, _ call: () -> CInt) throws(FileReplacementError) {
        do { _ = try retryingOnInterrupt(call) }
        catch { throw FileReplacementError(operation: operation, path: path, errno: error) }
    }
}
