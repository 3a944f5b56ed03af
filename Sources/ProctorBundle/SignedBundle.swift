import JSONCore
public import ProctorCrypto
public import ProctorPolicy

/// A signed policy bundle: a DSSE envelope (in-toto's Dead Simple Signing Envelope,
/// github.com/secure-systems-lab/dsse) whose payload is the canonical JSON of
/// `{expiresAt, issuedAt, keyId, policy, serial}`.
///
///     {"payload": "<Base64 payload>", "payloadType": "application/vnd.proctor.policy-bundle.v1+json",
///      "signatures": [{"keyid": "<key id>", "sig": "<Base64 Ed25519 signature>"}]}
///
/// The signature covers DSSE's pre-authentication encoding of the type and the exact payload
/// bytes, never a re-serialisation, so no JSON subtlety can make two readers disagree about
/// what was signed. See docs/fleet.md.
public enum SignedBundle {
    /// The envelope's `payloadType`; also signed, so the key's other signatures cannot pass as bundles.
    public static let payloadType = "application/vnd.proctor.policy-bundle.v1+json"
    /// The largest envelope accepted: the policy size limit, Base64-encoded, plus room for the rest.
    public static let maximumBytes = PolicyLimits.maxDocumentBytes / 3 * 4 + 64 * 1024
    /// Serials and times are JSON numbers: integers up to 2^53 - 1 are exact.
    static let maximumInteger = (1 << 53) - 1

    /// The envelope bytes (with a final newline) signing `policy` with `key`.
    public static func sign(_ policy: Policy, serial: Int, issuedAt: Int, expiresAt: Int,
                            with key: SigningKeyPair) -> [UInt8] {
        let payload = JSONValue.object([
            "expiresAt": .number(expiresAt), "issuedAt": .number(issuedAt), "keyId": .string(key.publicKey.keyID),
            "policy": policy.canonicalJSON, "serial": .number(serial),
        ]).serialized()
        let signature = key.sign(preAuthenticationEncoding(payload))
        let envelope = JSONValue.object([
            "payload": .string(Base64.encode(payload)),
            "payloadType": .string(payloadType),
            "signatures": .array([.object(["keyid": .string(key.publicKey.keyID), "sig": .string(Base64.encode(signature))])]),
        ])
        return envelope.serialized() + [UInt8(ascii: "\n")]
    }

    /// Whether `bytes` look like an envelope rather than a plain policy: a JSON object with a
    /// `payloadType`. Only chooses how to read a file; whether a signature is required is
    /// decided by configuration (`RequireSignedBundles=`), never by this.
    public static func looksSigned(_ bytes: [UInt8]) -> Bool {
        guard let value = try? JSONParser.parse(bytes) else { return false }
        return value["payloadType"] != nil
    }

    /// DSSE's PAE: `"DSSEv1" SP len(type) SP type SP len(payload) SP payload`, lengths in decimal.
    static func preAuthenticationEncoding(_ payload: [UInt8]) -> [UInt8] {
        Array("DSSEv1 \(payloadType.utf8.count) \(payloadType) \(payload.count) ".utf8) + payload
    }
}
