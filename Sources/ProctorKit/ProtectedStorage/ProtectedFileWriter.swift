public import Foundation
import Glibc
import LinuxIO
import ProctorCrypto

/// Writes one protected file in pieces, for content too large to hold in memory at once. Nothing
/// is visible under the name until `commit()`, which replaces the file atomically; a writer
/// dropped without `commit()` leaves the previous file (if any) untouched.
public final class ProtectedFileWriter {
    /// The protected file's name.
    public let name: String
    private let replacement: AtomicFileReplacement
    private let sealer: SecretStreamSealer
    private let associatedData: [UInt8]
    private var pending: [UInt8]  // plaintext not yet sealed: at most one chunk
    private var output: [UInt8]   // sealed chunks not yet written: written a batch at a time
    private var outputCount = 0
    private var isCommitted = false

    /// Sealed chunks are written 16 at a time (about 1 MiB): fewer system calls, bounded memory.
    private static let outputChunks = 16

    init(name: String, path: String, key: SymmetricKey) throws(ProtectedStorageError) {
        self.name = name
        do { replacement = try AtomicFileReplacement(replacing: path, mode: 0o600) }
        catch { throw .system(operation: error.operation, path: error.path, errno: error.errno.rawValue) }
        do { sealer = try SecretStreamSealer(key: key) }
        catch { throw .keyUnavailable(reason: "\(error)") }
        let prefix = ProtectedFileFormat.prefix(keyID: key.keyID)
        associatedData = ProtectedFileFormat.associatedData(prefix: prefix, name: name)
        pending = []
        pending.reserveCapacity(ProtectedFileFormat.chunkSize)
        let header = prefix + sealer.header
        output = [UInt8](repeating: 0, count: header.count + Self.outputChunks * ProtectedFileFormat.sealedChunkSize)
        output.replaceSubrange(0..<header.count, with: header)
        outputCount = header.count
    }

    /// Appends `bytes` to the file's content.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(ProtectedStorageError) {
        precondition(!isCommitted, "write after commit")
        var offset = 0
        while offset < bytes.count {
            // A full chunk is sealed only once more data follows, so the last chunk can carry FINAL.
            if pending.count == ProtectedFileFormat.chunkSize {
                try pending.withUnsafeBytes { raw in Result { () throws(ProtectedStorageError) in try seal(raw, isFinal: false) } }.get()
                pending.removeAll(keepingCapacity: true)
            }
            if pending.isEmpty && bytes.count - offset > ProtectedFileFormat.chunkSize {
                // A whole chunk with more after it: sealed straight from the caller's bytes.
                try seal(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + ProtectedFileFormat.chunkSize)]), isFinal: false)
                offset += ProtectedFileFormat.chunkSize
                continue
            }
            let take = min(ProtectedFileFormat.chunkSize - pending.count, bytes.count - offset)
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + take)]))
            offset += take
        }
    }

    /// Appends `data` to the file's content.
    public func write(_ data: Data) throws(ProtectedStorageError) {
        try data.withUnsafeBytes { raw in Result { () throws(ProtectedStorageError) in try write(raw) } }.get()
    }

    /// Seals the last chunk, flushes the file and renames it over `name`: once this returns the
    /// new content is durable and readers see all of it.
    public func commit() throws(ProtectedStorageError) {
        precondition(!isCommitted, "commit twice")
        try pending.withUnsafeBytes { raw in Result { () throws(ProtectedStorageError) in try seal(raw, isFinal: true) } }.get()
        isCommitted = true
        try flush()
        try perform { () throws(FileReplacementError) in try replacement.commit() }
    }

    private func seal(_ plaintext: UnsafeRawBufferPointer, isFinal: Bool) throws(ProtectedStorageError) {
        if output.count - outputCount < plaintext.count + SecretStream.chunkOverhead { try flush() }
        let count = output.withUnsafeMutableBytes { out in
            associatedData.withUnsafeBytes { ad in
                sealer.seal(plaintext, associatedData: ad, isFinal: isFinal, into: UnsafeMutableRawBufferPointer(rebasing: out[outputCount...]))
            }
        }
        outputCount += count
    }

    private func flush() throws(ProtectedStorageError) {
        let count = outputCount
        try perform { () throws(FileReplacementError) in
            try output.withUnsafeBytes { raw in Result { () throws(FileReplacementError) in
                try replacement.write(UnsafeRawBufferPointer(rebasing: raw[..<count]))
            } }.get()
        }
        outputCount = 0
    }

    private func perform(_ body: () throws(FileReplacementError) -> Void) throws(ProtectedStorageError) {
        do { try body() } catch {
            replacement.discard()
            throw .system(operation: error.operation, path: error.path, errno: error.errno.rawValue)
        }
    }

    deinit {
        // Plaintext waiting to be sealed is not left in freed memory.
        pending.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }
    }
}
