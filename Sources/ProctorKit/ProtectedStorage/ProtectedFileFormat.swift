import ProctorCrypto

/// The on-disk layout of a protected file:
///
///     magic "PKPS" (4) ‖ version 1 (1) ‖ key id (16 ASCII hex digits) ‖ secretstream header (24) ‖ chunks…
///
/// Each chunk is up to `chunkSize` bytes of plaintext sealed with
/// `crypto_secretstream_xchacha20poly1305` (+17 bytes); every chunk but the last is full, the last
/// carries the FINAL tag. Every chunk authenticates, as associated data, the 21-byte prefix and
/// the file's name: a file renamed or copied over another name, or given another header, fails
/// to read.
enum ProtectedFileFormat {
    static let magic: [UInt8] = Array("PKPS".utf8)
    static let version: UInt8 = 1
    static let keyIDSize = 16
    static let prefixSize = magic.count + 1 + keyIDSize
    static let headerSize = prefixSize + SecretStream.headerSize
    /// Plaintext bytes per chunk (64 KiB): large enough that the 17-byte overhead and the
    /// per-chunk calls cost little, small enough to bound the memory a reader needs.
    static let chunkSize = 64 * 1024
    static let sealedChunkSize = chunkSize + SecretStream.chunkOverhead
    /// Longest name in UTF-8 bytes, leaving room for the temporary file's prefix within NAME_MAX.
    static let maximumNameLength = 200

    /// The 21-byte prefix for a file under the key `keyID` (16 hex digits).
    static func prefix(keyID: String) -> [UInt8] {
        magic + [version] + Array(keyID.utf8)
    }

    /// What every chunk of `name`'s file authenticates.
    static func associatedData(prefix: [UInt8], name: String) -> [UInt8] {
        prefix + Array(name.utf8)
    }

    /// Checks a name: not empty, at most 200 bytes, no `/` or NUL, no control characters, not
    /// starting with `.` (which rules out `.`, `..` and the temporary files).
    static func validate(_ name: String) throws(ProtectedStorageError) {
        if name.isEmpty { throw .invalidName(name, reason: "it is empty") }
        if name.utf8.count > maximumNameLength {
            throw .invalidName(name, reason: "it is longer than \(maximumNameLength) bytes")
        }
        // By bytes, as the file system reads the name: "." or "/" followed by a combining mark is
        // one Character that is neither "." nor "/".
        if name.utf8.first == UInt8(ascii: ".") { throw .invalidName(name, reason: "it starts with \".\"") }
        if name.utf8.contains(UInt8(ascii: "/")) { throw .invalidName(name, reason: "it contains \"/\"") }
        if name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) {
            throw .invalidName(name, reason: "it contains a control character")
        }
    }

    /// Parses the 21-byte prefix read from `name`'s file; returns the key id it names.
    static func keyID(inPrefix prefix: ArraySlice<UInt8>, name: String) throws(ProtectedStorageError) -> String {
        guard prefix.count == prefixSize, prefix.prefix(magic.count).elementsEqual(magic) else {
            throw .notAProtectedFile(name)
        }
        let version = prefix[prefix.startIndex + magic.count]
        guard version == Self.version else { throw .unsupportedVersion(name, version: version) }
        return String(decoding: prefix.suffix(keyIDSize), as: UTF8.self)
    }
}
