import JSONCore
import ProctorCrypto
public import ProctorPolicy

/// A bundle whose signature, signer, policy digest, serial and expiry passed: the signed facts
/// and the policy's bytes, not yet parsed (`readPolicy()`).
public struct VerifiedBundle: Sendable {
    public let serial: Int
    /// Unix seconds.
    public let issuedAt: Int
    /// Unix seconds.
    public let expiresAt: Int
    /// The trusted key whose signature verified.
    public let keyID: String
    /// The policy exactly as signed.
    public let policyBytes: ArraySlice<UInt8>

    /// The signed policy, parsed and validated; `.invalidPolicy` with its problems if it is not one.
    public func readPolicy() throws(BundleRefusal) -> Policy {
        do { return try Policy.parse(Array(policyBytes), source: "bundle serial \(serial)") }
        catch { throw .invalidPolicy(error.problems.map(\.description)) }
    }
}

/// A verified bundle and its policy, read and valid: ready to apply.
public struct OpenedBundle: Sendable {
    public let bundle: VerifiedBundle
    public let policy: Policy
}

/// Checks a signed bundle against the trusted keys and the last applied serial. Pure: the
/// caller loads the keys, reads the clock and persists the serial.
public struct BundleVerifier: Sendable {
    public let trustedKeys: TrustedKeys
    /// The serial of the last bundle applied (0: none yet).
    public let lastAppliedSerial: Int

    public init(trustedKeys: TrustedKeys, lastAppliedSerial: Int) {
        self.trustedKeys = trustedKeys
        self.lastAppliedSerial = lastAppliedSerial
    }

    /// The bundle in `bytes`, if it is well formed, signed by a trusted key, its policy bytes
    /// are the signed ones, and it is newer than the last applied one and not expired at `now`
    /// (Unix seconds). The policy is not parsed: verifying costs one signature check over the
    /// header and one digest pass over the policy (its chunks hashed on every core), whatever
    /// the policy holds.
    public func verify(_ bytes: [UInt8], now: Int) throws(BundleRefusal) -> VerifiedBundle {
        guard bytes.count <= SignedBundle.maximumBytes else {
            throw .malformed("\(bytes.count) bytes, more than the limit of \(SignedBundle.maximumBytes)")
        }
        guard let newline = SignedBundle.envelopeEnd(bytes) else {
            throw .malformed("expected a signed envelope on the first line (at most \(SignedBundle.maximumEnvelopeBytes) "
                + "bytes) followed by the policy; truncated, or a plain policy?")
        }
        let envelope = try Envelope(Array(bytes[..<newline]))
        guard envelope.payloadType == SignedBundle.payloadType else { throw .wrongPayloadType(envelope.payloadType) }
        let trusted = envelope.signatures.filter { trustedKeys.keys[$0.keyID] != nil }
        guard !trusted.isEmpty else { throw .unknownKey(keyIDs: envelope.signatures.map(\.keyID)) }
        // Every signature claiming a trusted key must verify: an altered bundle is never
        // passed by a second signature that happens to be intact.
        let message = SignedBundle.preAuthenticationEncoding(envelope.payload)
        for entry in trusted {
            do { try trustedKeys.keys[entry.keyID]!.verify(signature: entry.signature, of: message) }
            catch { throw .badSignature(keyID: entry.keyID) }
        }
        let header = try Header(envelope.payload)
        guard trusted.contains(where: { $0.keyID == header.keyID }) else {
            throw .signerMismatch(stated: header.keyID, verified: trusted[0].keyID)
        }
        // The policy is checked before the serial, so that an altered bundle with the serial in
        // force is refused rather than taken for the one already applied.
        let policy = bytes[(newline + 1)...]
        guard policy.count == header.policySize else {
            throw .malformed("the policy is \(policy.count) bytes, the signed header says \(header.policySize); truncated?")
        }
        guard BLAKE2b256.hashListHex(of: policy, chunkSize: header.chunkSize) == header.policyDigest else {
            throw .badSignature(keyID: header.keyID)
        }
        guard header.serial > lastAppliedSerial else { throw .rollback(serial: header.serial, lastApplied: lastAppliedSerial) }
        guard now < header.expiresAt else { throw .expired(expiresAt: header.expiresAt, now: now) }
        return VerifiedBundle(serial: header.serial, issuedAt: header.issuedAt, expiresAt: header.expiresAt,
                              keyID: header.keyID, policyBytes: policy)
    }

    /// `verify`, then the signed policy read and validated: what applying a bundle needs.
    public func open(_ bytes: [UInt8], now: Int) throws(BundleRefusal) -> OpenedBundle {
        let bundle = try verify(bytes, now: now)
        return OpenedBundle(bundle: bundle, policy: try bundle.readPolicy())
    }
}

/// The DSSE envelope's fields, checked for shape only.
private struct Envelope {
    struct Signature {
        var keyID: String
        var signature: [UInt8]
    }

    var payloadType: String
    var payload: [UInt8]
    var signatures: [Signature]

    init(_ line: [UInt8]) throws(BundleRefusal) {
        let value: JSONValue
        do { value = try JSONParser.parse(line) } catch { throw .malformed("the envelope line is not JSON (\(error))") }
        guard let object = value.objectValue else { throw .malformed("expected a JSON object, found \(value.typeDescription)") }
        payloadType = try field(object, "payloadType", \.stringValue, "a string")
        let encoded: String = try field(object, "payload", \.stringValue, "a Base64 string")
        guard let payload = Base64.decode(encoded, maximumCount: SignedBundle.maximumEnvelopeBytes) else {
            throw .malformed("payload: expected Base64")
        }
        self.payload = payload
        let entries: [JSONValue] = try field(object, "signatures", \.arrayValue, "an array")
        guard entries.count <= 16 else { throw .malformed("signatures: more than 16") }
        signatures = try entries.enumerated().map { (index, entry) throws(BundleRefusal) in
            guard let entry = entry.objectValue else { throw .malformed("signatures[\(index)]: expected an object") }
            let keyID: String = try field(entry, "keyid", \.stringValue, "a key id string", in: "signatures[\(index)].")
            let encoded: String = try field(entry, "sig", \.stringValue, "a Base64 string", in: "signatures[\(index)].")
            guard let signature = Base64.decode(encoded, maximumCount: 1024) else {
                throw .malformed("signatures[\(index)].sig: expected Base64")
            }
            return Signature(keyID: keyID, signature: signature)
        }
    }
}

/// The signed header: the facts about the bundle and the digest of its policy.
private struct Header {
    static let members: Set<String> = ["expiresAt", "issuedAt", "keyId", "policyChunkSize", "policyChunksBlake2b256",
                                       "policySize", "serial"]

    var serial: Int
    var issuedAt: Int
    var expiresAt: Int
    var keyID: String
    /// The BLAKE2b-256 hash list of the policy bytes in `chunkSize` chunks, 64 lower-case hex digits.
    var policyDigest: String
    var chunkSize: Int
    var policySize: Int

    init(_ bytes: [UInt8]) throws(BundleRefusal) {
        let value: JSONValue
        do { value = try JSONParser.parse(bytes) } catch { throw .malformed("payload: not JSON (\(error))") }
        guard let object = value.objectValue else { throw .malformed("payload: expected a JSON object") }
        // Signed, but a member this version does not know may say something it would ignore.
        if let unknown = object.keys.sorted().first(where: { !Self.members.contains($0) }) {
            throw .malformed("payload.\(unknown): unknown member; expected only \(Self.members.sorted().joined(separator: ", "))")
        }
        let where_ = "payload."
        serial = try integer(object, "serial", in: where_)
        issuedAt = try integer(object, "issuedAt", in: where_)
        expiresAt = try integer(object, "expiresAt", in: where_)
        keyID = try field(object, "keyId", \.stringValue, "a key id string", in: where_)
        policyDigest = try field(object, "policyChunksBlake2b256", \.stringValue, "a BLAKE2b-256 digest in hex", in: where_)
        chunkSize = try integer(object, "policyChunkSize", in: where_)
        policySize = try integer(object, "policySize", in: where_)
        guard serial > 0 else { throw .malformed("payload.serial: expected a positive integer, found \(serial)") }
        guard policyDigest.utf8.count == 64, policyDigest.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
            throw .malformed("payload.policyChunksBlake2b256: expected 64 lower-case hex digits")
        }
        guard SignedBundle.chunkSizes.contains(chunkSize), chunkSize & (chunkSize - 1) == 0 else {
            throw .malformed("payload.policyChunkSize: expected a power of two from \(SignedBundle.chunkSizes.lowerBound) "
                + "to \(SignedBundle.chunkSizes.upperBound), found \(chunkSize)")
        }
    }
}

private func field<T>(_ object: [String: JSONValue], _ key: String, _ read: (JSONValue) -> T?, _ expected: String,
                      in prefix: String = "") throws(BundleRefusal) -> T {
    guard let value = object[key] else { throw .malformed("\(prefix)\(key): missing, expected \(expected)") }
    guard let result = read(value) else {
        throw .malformed("\(prefix)\(key): expected \(expected), found \(value.typeDescription)")
    }
    return result
}

private func integer(_ object: [String: JSONValue], _ key: String, in prefix: String) throws(BundleRefusal) -> Int {
    let value: Int = try field(object, key, \.intValue, "an integer", in: prefix)
    guard (0...SignedBundle.maximumInteger).contains(value) else {
        throw .malformed("\(prefix)\(key): expected an integer from 0 to 2^53-1, found \(value)")
    }
    return value
}
