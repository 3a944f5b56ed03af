import JSONCore
import ProctorCrypto
public import ProctorPolicy

/// A bundle that passed every check: its policy and the signed facts about it.
public struct VerifiedBundle: Sendable {
    public let policy: Policy
    public let serial: Int
    /// Unix seconds.
    public let issuedAt: Int
    /// Unix seconds.
    public let expiresAt: Int
    /// The trusted key whose signature verified.
    public let keyID: String
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

    /// The bundle in `bytes`, if it is well formed, signed by a trusted key, newer than the
    /// last applied one and not expired at `now` (Unix seconds). The payload is parsed only
    /// after its signature verified.
    public func verify(_ bytes: [UInt8], now: Int) throws(BundleRefusal) -> VerifiedBundle {
        let envelope = try Envelope(bytes)
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
        let payload = try Payload(envelope.payload)
        guard trusted.contains(where: { $0.keyID == payload.keyID }) else {
            throw .signerMismatch(stated: payload.keyID, verified: trusted[0].keyID)
        }
        guard payload.serial > lastAppliedSerial else { throw .rollback(serial: payload.serial, lastApplied: lastAppliedSerial) }
        guard now < payload.expiresAt else { throw .expired(expiresAt: payload.expiresAt, now: now) }
        let policy: Policy
        do {
            let source = "bundle serial \(payload.serial)"
            switch payload.policy {
            case .valid(let valid): policy = valid
            case .parsed(let document, withinLimits: true): policy = try Policy.read(document, source: source)
            // The payload was parsed with the policy's nesting limit; a deeper one gets the
            // policy parser's own message from its serialised bytes.
            case .parsed(let document, withinLimits: false): policy = try Policy.parse(document.serialized(), source: source)
            }
        } catch {
            throw .invalidPolicy(error.problems.map(\.description))
        }
        return VerifiedBundle(policy: policy, serial: payload.serial, issuedAt: payload.issuedAt,
                              expiresAt: payload.expiresAt, keyID: payload.keyID)
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

    init(_ bytes: [UInt8]) throws(BundleRefusal) {
        guard bytes.count <= SignedBundle.maximumBytes else {
            throw .malformed("\(bytes.count) bytes, more than the limit of \(SignedBundle.maximumBytes)")
        }
        let value: JSONValue
        do { value = try JSONParser.parse(bytes) } catch { throw .malformed("not JSON (\(error)); truncated?") }
        guard let object = value.objectValue else { throw .malformed("expected a JSON object, found \(value.typeDescription)") }
        payloadType = try field(object, "payloadType", \.stringValue, "a string")
        let encoded: String = try field(object, "payload", \.stringValue, "a Base64 string")
        guard let payload = Base64.decode(encoded, maximumCount: PolicyLimits.maxDocumentBytes) else {
            throw .malformed("payload: expected Base64 of at most \(PolicyLimits.maxDocumentBytes) bytes")
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

/// The signed payload's fields.
private struct Payload {
    /// The policy: read and valid, or parsed JSON for `Policy.read` to explain.
    enum PolicyDocument {
        case valid(Policy)
        /// `withinLimits`: it nests no deeper than a policy document may (`PolicyLimits.maxNestingDepth`).
        case parsed(JSONValue, withinLimits: Bool)
    }

    var policy: PolicyDocument
    var serial: Int
    var issuedAt: Int
    var expiresAt: Int
    var keyID: String

    /// Parsed in one pass, policy included, at one level more than a policy may nest (it is
    /// a member of the payload). Anything unusual is parsed again into a `JSONValue` for
    /// the checks below, which say what is wrong.
    init(_ bytes: [UInt8]) throws(BundleRefusal) {
        if let payload = Payload(valid: bytes) {
            self = payload
            return
        }
        let value: JSONValue
        let withinLimits: Bool
        do {
            value = try JSONParser.parse(bytes, maxDepth: PolicyLimits.maxNestingDepth + 1)
            withinLimits = true
        } catch {
            do { value = try JSONParser.parse(bytes) } catch { throw .malformed("payload: not JSON (\(error))") }
            withinLimits = false
        }
        guard let object = value.objectValue else { throw .malformed("payload: expected a JSON object") }
        let where_ = "payload."
        let document: JSONValue = try field(object, "policy", { $0.objectValue.map(JSONValue.object) }, "an object", in: where_)
        policy = .parsed(document, withinLimits: withinLimits)
        serial = try integer(object, "serial", in: where_)
        issuedAt = try integer(object, "issuedAt", in: where_)
        expiresAt = try integer(object, "expiresAt", in: where_)
        keyID = try field(object, "keyId", \.stringValue, "a key id string", in: where_)
        guard serial > 0 else { throw .malformed("payload.serial: expected a positive integer, found \(serial)") }
    }
}

extension Payload {
    /// A payload with exactly the expected members, each valid, policy included: read
    /// straight from the bytes (`Policy.readIfValid`); nil for anything else.
    init?(valid bytes: [UInt8]) {
        var json = JSONPullReader(bytes, maxDepth: PolicyLimits.maxNestingDepth + 1)
        var policy: Policy?, serial: Int?, issuedAt: Int?, expiresAt: Int?, keyID: String?
        func integer(_ json: inout JSONPullReader) -> Int? {
            guard let number = try? json.number(), number.rounded(.towardZero) == number,
                  number >= 0, number <= Double(SignedBundle.maximumInteger) else { return nil }
            return Int(number)
        }
        do {
            try json.beginObject()
            while let key = try json.nextKey() {
                // A member that does not read leaves `json` inside it: give up.
                switch key {
                case "policy" where policy == nil:
                    guard let read = Policy.readIfValid(&json) else { return nil }
                    policy = read
                case "serial" where serial == nil:
                    guard let read = integer(&json) else { return nil }
                    serial = read
                case "issuedAt" where issuedAt == nil:
                    guard let read = integer(&json) else { return nil }
                    issuedAt = read
                case "expiresAt" where expiresAt == nil:
                    guard let read = integer(&json) else { return nil }
                    expiresAt = read
                case "keyId" where keyID == nil: keyID = try json.string()
                default: return nil
                }
            }
            try json.end()
        } catch {
            return nil
        }
        guard let policy, let serial, let issuedAt, let expiresAt, let keyID, serial > 0 else { return nil }
        self.init(policy: .valid(policy), serial: serial, issuedAt: issuedAt, expiresAt: expiresAt, keyID: keyID)
    }

    private init(policy: PolicyDocument, serial: Int, issuedAt: Int, expiresAt: Int, keyID: String) {
        self.policy = policy
        self.serial = serial
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.keyID = keyID
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
