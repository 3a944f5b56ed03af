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
    private let file: PipelinedFileReplacement
    private let sealer: SecretStreamSealer
    private let associatedData: [UInt8]
    private var pending: [UInt8]  // plaintext not yet sealed: at most one chunk
    private var isCommitted = false

    /// Sealed chunks are written 4 at a time (about 256 KiB) on a background queue while the
    /// next 4 are sealed: small enough that a 1 MiB file overlaps most of its writing, large
    /// enough that the hand-overs and system calls cost little.
    private static let batchChunks = 4

    init(name: String, path: String, key: SymmetricKey) throws(ProtectedStorageError) {
        self.name = name
        let prefix = ProtectedFileFormat.prefix(keyID: key.keyID)
        do { sealer = try SecretStreamSealer(key: key) }
        catch { throw .keyUnavailable(reason: "\(error)") }
        let header = prefix + sealer.header
        do {
            file = try PipelinedFileReplacement(replacing: path, mode: 0o600,
                                                bufferSize: header.count + Self.batchChunks * ProtectedFileFormat.sealedChunkSize)
        } catch { throw .system(operation: error.operation, path: error.path, errno: error.errno.rawValue) }
        associatedData = ProtectedFileFormat.associatedData(prefix: prefix, name: name)
        pending = []
        pending.reserveCapacity(ProtectedFileFormat.chunkSize)
        header.withUnsafeBytes { file.buffer.copyMemory(from: $0) }
        file.filled = header.count
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
        try perform { () throws(FileReplacementError) in try file.commit() }
    }

    private func seal(_ plaintext: UnsafeRawBufferPointer, isFinal: Bool) throws(ProtectedStorageError) {
        if file.buffer.count - file.filled < plaintext.count + SecretStream.chunkOverhead {
            try perform { () throws(FileReplacementError) in try file.submit() }
        }
        let count = associatedData.withUnsafeBytes { ad in
            sealer.seal(plaintext, associatedData: ad, isFinal: isFinal, into: UnsafeMutableRawBufferPointer(rebasing: file.buffer[file.filled...]))
        }
        file.filled += count
    }

    private func perform(_ body: () throws(FileReplacementError) -> Void) throws(ProtectedStorageError) {
        do { try body() } catch {
            throw .system(operation: error.operation, path: error.path, errno: error.errno.rawValue)
        }
    }

    deinit {
        if !isCommitted { file.discard() }  // waits for a background write still in flight
        // Plaintext waiting to be sealed is not left in freed memory.
        pending.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }
    }
}
