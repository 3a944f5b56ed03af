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
    private var sealed: [UInt8]
    private var isCommitted = false

    init(name: String, path: String, key: SymmetricKey) throws(ProtectedStorageError) {
        self.name = name
        do { replacement = try AtomicFileReplacement(replacing: path, mode: 0o600) }
        catch { throw .system(operation: error.operation, path: error.path, errno: error.errno) }
        do { sealer = try SecretStreamSealer(key: key) }
        catch { throw .keyUnavailable(reason: "\(error)") }
        let prefix = ProtectedFileFormat.prefix(keyID: key.keyID)
        associatedData = ProtectedFileFormat.associatedData(prefix: prefix, name: name)
        pending = []
        pending.reserveCapacity(ProtectedFileFormat.chunkSize)
        sealed = [UInt8](repeating: 0, count: ProtectedFileFormat.sealedChunkSize)
        try perform { () throws(FileReplacementError) in try replacement.write(prefix + sealer.header) }
    }

    /// Appends `bytes` to the file's content.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(ProtectedStorageError) {
        precondition(!isCommitted, "write after commit")
        var offset = 0
        while offset < bytes.count {
            // A full chunk is sealed only once more data follows, so the last chunk can carry FINAL.
            if pending.count == ProtectedFileFormat.chunkSize { try sealPending(isFinal: false) }
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
        try sealPending(isFinal: true)
        isCommitted = true
        try perform { () throws(FileReplacementError) in try replacement.commit() }
    }

    private func sealPending(isFinal: Bool) throws(ProtectedStorageError) {
        let count = pending.withUnsafeBytes { input in
            sealed.withUnsafeMutableBytes { output in
                associatedData.withUnsafeBytes { sealer.seal(input, associatedData: $0, isFinal: isFinal, into: output) }
            }
        }
        pending.removeAll(keepingCapacity: true)
        try perform { () throws(FileReplacementError) in
            try sealed.withUnsafeBytes { raw in Result { () throws(FileReplacementError) in
                try replacement.write(UnsafeRawBufferPointer(rebasing: raw[..<count]))
            } }.get()
        }
    }

    private func perform(_ body: () throws(FileReplacementError) -> Void) throws(ProtectedStorageError) {
        do { try body() } catch {
            replacement.discard()
            throw .system(operation: error.operation, path: error.path, errno: error.errno)
        }
    }

    deinit {
        // Plaintext waiting to be sealed is not left in freed memory.
        pending.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }
    }
}
