import CSodium

/// An Ed25519 public key (libsodium's `crypto_sign`, RFC 8032) that verifies detached signatures.
///
/// Its text form is one line: `ed25519 <key id> <Base64 key>`, where the key id is the first
/// 8 bytes of the BLAKE2b-256 hash of the key, in hex: short enough to name the key in a bundle
/// or a log, checked on load so a mangled line is refused.
public struct SigningPublicKey: Hashable, Sendable, CustomStringConvertible {
    /// The key's size in bytes (32).
    public static let byteCount = Int(crypto_sign_PUBLICKEYBYTES)
    /// A detached signature's size in bytes (64).
    public static let signatureByteCount = Int(crypto_sign_BYTES)
    static let algorithm = "ed25519"

    /// The raw key.
    public let bytes: [UInt8]
    /// The key's id: 16 hex digits.
    public let keyID: String

    /// The key whose raw bytes are `bytes` (32 of them).
    public init(bytes: [UInt8]) throws(CryptoError) {
        try Sodium.ready()
        guard bytes.count == Self.byteCount else {
            throw .wrongLength(what: "an Ed25519 public key", expected: Self.byteCount, actual: bytes.count)
        }
        self.bytes = bytes
        keyID = Self.keyID(of: bytes)
    }

    /// Parses the one-line text form; `source` names where it came from in errors (a path).
    public init(text: String, source: String = "public key text") throws(CryptoError) {
        let line = text.hasSuffix("\n") ? text.dropLast() : Substring(text)
        let fields = line.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 3, fields[0] == Self.algorithm else {
            throw .malformedKey(source: source, reason: "expected one line \"\(Self.algorithm) <key id> <base64 key>\"")
        }
        var raw = [UInt8](repeating: 0, count: Self.byteCount)
        let decoded = raw.withUnsafeMutableBytes { out in
            Array(fields[2].utf8).withUnsafeBytes { decodeBase64($0, into: out) }
        }
        guard decoded else {
            throw .malformedKey(source: source, reason: "the key is not \(Self.byteCount) bytes of Base64")
        }
        try self.init(bytes: raw)
        guard fields[1] == keyID else { throw .keyIDMismatch(source: source, stated: String(fields[1]), actual: keyID) }
    }

    /// Reads the key file at `path` (its one-line text form).
    public static func load(from path: String) throws(CryptoError) -> SigningPublicKey {
        var contents = try KeyFile.read(path)
        defer { wipe(&contents) }
        return try SigningPublicKey(text: String(decoding: contents, as: UTF8.self), source: path)
    }

    /// The one-line text form, without a newline.
    public var text: String {
        "\(Self.algorithm) \(keyID) \(bytes.withUnsafeBytes { base64($0) })"
    }

    /// Writes the text form to a new file at `path` (mode 0644); refuses to replace a file.
    public func save(to path: String) throws(CryptoError) {
        try KeyFile.create(path, contents: Array((text + "\n").utf8), mode: 0o644)
    }

    public var description: String { "Ed25519 key \(keyID)" }

    /// Checks that `signature` is this key's signature of `message`; `.signatureMismatch` if not.
    public func verify(signature: [UInt8], of message: UnsafeRawBufferPointer) throws(CryptoError) {
        guard signature.count == Self.signatureByteCount else {
            throw .wrongLength(what: "an Ed25519 signature", expected: Self.signatureByteCount, actual: signature.count)
        }
        let status = signature.withUnsafeBytes { sig in
            bytes.withUnsafeBytes { key in
                crypto_sign_verify_detached(ProctorCrypto.bytes(sig), ProctorCrypto.bytes(message), UInt64(message.count),
                                            ProctorCrypto.bytes(key))
            }
        }
        guard status == 0 else { throw .signatureMismatch(keyID: keyID) }
    }

    /// Checks that `signature` is this key's signature of `message`; `.signatureMismatch` if not.
    public func verify(signature: [UInt8], of message: [UInt8]) throws(CryptoError) {
        try message.withUnsafeBytes { raw in Result { () throws(CryptoError) in try verify(signature: signature, of: raw) } }.get()
    }

    /// BLAKE2b-256 of the key, first 8 bytes, in hex.
    static func keyID(of key: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        digest.withUnsafeMutableBytes { out in
            key.withUnsafeBytes { input in
                _ = crypto_generichash(mutableBytes(out), out.count, ProctorCrypto.bytes(input), UInt64(input.count), nil, 0)
            }
        }
        return hex(digest.prefix(8))
    }
}

/// An Ed25519 key pair that signs (libsodium's `crypto_sign_detached`). The secret half lives in
/// locked memory, zeroed when the pair goes away.
///
/// Its private key file holds one line, `ed25519-secret <key id> <Base64 32-byte seed>`, mode 0600;
/// loading refuses a file that others may read.
public struct SigningKeyPair: Sendable, CustomStringConvertible {
    /// The seed's size in bytes (32): the private key file stores the seed, which determines both halves.
    public static let seedByteCount = Int(crypto_sign_SEEDBYTES)
    static let secretAlgorithm = "ed25519-secret"

    /// The public half.
    public let publicKey: SigningPublicKey
    private let secretKey: LockedBytes  // libsodium's 64-byte form: seed ‖ public key

    /// A fresh random key pair.
    public static func generate() throws(CryptoError) -> SigningKeyPair {
        try Sodium.ready()
        var publicBytes = [UInt8](repeating: 0, count: SigningPublicKey.byteCount)
        let secret = LockedBytes(count: Int(crypto_sign_SECRETKEYBYTES)) { out in
            publicBytes.withUnsafeMutableBytes { _ = crypto_sign_keypair(mutableBytes($0), mutableBytes(out)) }
        }
        return try SigningKeyPair(publicKey: SigningPublicKey(bytes: publicBytes), secretKey: secret)
    }

    /// The key pair determined by a 32-byte `seed` (RFC 8032's "secret key").
    public init(seed: UnsafeRawBufferPointer) throws(CryptoError) {
        try Sodium.ready()
        guard seed.count == Self.seedByteCount else {
            throw .wrongLength(what: "an Ed25519 seed", expected: Self.seedByteCount, actual: seed.count)
        }
        var publicBytes = [UInt8](repeating: 0, count: SigningPublicKey.byteCount)
        let secret = LockedBytes(count: Int(crypto_sign_SECRETKEYBYTES)) { out in
            publicBytes.withUnsafeMutableBytes {
                _ = crypto_sign_seed_keypair(mutableBytes($0), mutableBytes(out), bytes(seed))
            }
        }
        try self.init(publicKey: SigningPublicKey(bytes: publicBytes), secretKey: secret)
    }

    private init(publicKey: SigningPublicKey, secretKey: LockedBytes) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// The detached signature (64 bytes) of `message`.
    public func sign(_ message: UnsafeRawBufferPointer) -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: SigningPublicKey.signatureByteCount)
        signature.withUnsafeMutableBytes { out in
            _ = crypto_sign_detached(mutableBytes(out), nil, bytes(message), UInt64(message.count), bytes(secretKey.bytes))
        }
        return signature
    }

    /// The detached signature (64 bytes) of `message`.
    public func sign(_ message: [UInt8]) -> [UInt8] {
        message.withUnsafeBytes { sign($0) }
    }

    public var description: String { "Ed25519 key pair \(publicKey.keyID)" }

    /// Writes the private key file at `path` (mode 0600) and the public key at `path.pub`
    /// (mode 0644); refuses to replace either file.
    public func save(privateKeyTo path: String) throws(CryptoError) {
        let seed = UnsafeRawBufferPointer(rebasing: secretKey.bytes[..<Self.seedByteCount])
        var line = Array("\(Self.secretAlgorithm) \(publicKey.keyID) \(base64(seed))\n".utf8)
        defer { wipe(&line) }
        try KeyFile.create(path, contents: line, mode: 0o600)
        try publicKey.save(to: path + ".pub")
    }

    /// Reads the private key file at `path`; refuses one that group or others may read, one whose
    /// key id does not match its key, and anything not in the one-line format.
    public static func load(privateKeyFrom path: String) throws(CryptoError) -> SigningKeyPair {
        var contents = try KeyFile.read(path, privateKey: true)
        defer { wipe(&contents) }
        if contents.last == UInt8(ascii: "\n") { contents.removeLast() }
        let fields = contents.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard fields.count == 3, Array(fields[0]) == Array(secretAlgorithm.utf8) else {
            throw .malformedKey(source: path, reason: "expected one line \"\(secretAlgorithm) <key id> <base64 seed>\"")
        }
        let seed = try LockedBytes(count: seedByteCount) { (out) throws(CryptoError) in
            guard fields[2].withUnsafeBytes({ decodeBase64($0, into: out) }) else {
                throw .malformedKey(source: path, reason: "the seed is not \(seedByteCount) bytes of Base64")
            }
        }
        let pair = try SigningKeyPair(seed: seed.bytes)
        let stated = String(decoding: fields[1], as: UTF8.self)
        guard stated == pair.publicKey.keyID else {
            throw .keyIDMismatch(source: path, stated: stated, actual: pair.publicKey.keyID)
        }
        return pair
    }
}
