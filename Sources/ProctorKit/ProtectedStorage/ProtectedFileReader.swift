public import Foundation
import Glibc
import LinuxIO
import ProctorCrypto

/// Reads one protected file chunk by chunk (at most 64 KiB at a time), for content too large to
/// hold in memory. Each chunk is returned only after it has been authenticated; `next()` returns
/// nil only after the file's final chunk, so a truncated file ends with an error, never quietly.
/// (Whoever needs all-or-nothing for a large file should consume it fully before acting on it;
/// `ProtectedStorage.read` does this for the whole file.)
public final class ProtectedFileReader {
    /// The protected file's name.
    public let name: String
    private let path: String
    private let descriptor: FileDescriptor
    private let opener: SecretStreamOpener
    private let associatedData: [UInt8]
    private var sealed: [UInt8]
    private var plaintext: [UInt8]
    /// The file's size in bytes, so a caller reading it all can reserve room.
    let fileSize: Int

    init(name: String, path: String, key: SymmetricKey) throws(ProtectedStorageError) {
        self.name = name
        self.path = path
        do { descriptor = try FileDescriptor.open(path, O_RDONLY) }
        catch where error == .noSuchFileOrDirectory { throw .noSuchFile(name) }
        catch { throw .system(operation: "open", path: path, errno: error.rawValue) }
        var status = stat()
        fileSize = fstat(descriptor.rawValue, &status) == 0 ? Int(status.st_size) : 0
        sealed = [UInt8](repeating: 0, count: ProtectedFileFormat.sealedChunkSize)
        plaintext = [UInt8](repeating: 0, count: ProtectedFileFormat.chunkSize)
        do throws(ProtectedStorageError) {
            var header = [UInt8](repeating: 0, count: ProtectedFileFormat.headerSize)
            let count = try Self.readFully(descriptor, into: &header, path: path)
            let prefix = header[..<min(count, ProtectedFileFormat.prefixSize)]
            let fileKeyID = try ProtectedFileFormat.keyID(inPrefix: prefix, name: name)
            guard fileKeyID == key.keyID else {
                throw .encryptedWithAnotherKey(name, fileKeyID: fileKeyID, currentKeyID: key.keyID)
            }
            guard count == header.count else { throw .damaged(name, .truncatedStream(chunksRead: 0)) }
            associatedData = ProtectedFileFormat.associatedData(prefix: Array(prefix), name: name)
            do { opener = try SecretStreamOpener(key: key, header: Array(header[ProtectedFileFormat.prefixSize...])) }
            catch { throw .damaged(name, error) }
        } catch {
            try? descriptor.close()
            throw error
        }
    }

    deinit {
        try? descriptor.close()
        plaintext.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }
    }

    /// The next authenticated chunk of content, or nil after the final chunk. Throws `.damaged`
    /// when a chunk was altered, the file was cut short, or bytes follow the final chunk.
    public func next() throws(ProtectedStorageError) -> Data? {
        guard let count = try nextChunk() else { return nil }
        return Data(plaintext[..<count])
    }

    /// Opens the next chunk into `plaintext`; returns its length, nil after the final chunk.
    func nextChunk() throws(ProtectedStorageError) -> Int? {
        let count = try Self.readFully(descriptor, into: &sealed, path: path)
        if opener.isFinished {
            guard count == 0 else { throw .damaged(name, .dataAfterFinalChunk) }
            return nil
        }
        if count == 0 {
            do { try opener.finish() } catch { throw .damaged(name, error) }
        }
        let result = sealed.withUnsafeBytes { input in
            plaintext.withUnsafeMutableBytes { output in
                associatedData.withUnsafeBytes { ad in
                    Result { () throws(CryptoError) in
                        try opener.open(UnsafeRawBufferPointer(rebasing: input[..<count]), associatedData: ad, into: output)
                    }
                }
            }
        }
        do { return try result.get().count } catch { throw .damaged(name, error) }
    }

    /// Calls `body` with each authenticated chunk, in order, until the final one.
    func forEachChunk(_ body: (UnsafeRawBufferPointer) -> Void) throws(ProtectedStorageError) {
        while let count = try nextChunk() {
            plaintext.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        }
    }

    /// Reads until `buffer` is full or the file ends; returns the bytes read.
    private static func readFully(_ descriptor: FileDescriptor, into buffer: inout [UInt8], path: String) throws(ProtectedStorageError) -> Int {
        let result = buffer.withUnsafeMutableBytes { raw in
            Result { () throws(Errno) in try descriptor.read(filling: raw) }
        }
        do { return try result.get() } catch { throw .system(operation: "read", path: path, errno: error.rawValue) }
    }
}
