import JSONCore
public import ProctorCrypto
public import ProctorPolicy

/// A signed policy bundle: a one-line DSSE envelope (in-toto's Dead Simple Signing Envelope,
/// github.com/secure-systems-lab/dsse) whose payload is a small **header**, then a newline,
/// then the policy's exact bytes:
///
///     {"payload":"<Base64 header>","payloadType":"application/vnd.proctor.policy-bundle.v3+json","signatures":[{"keyid":"<key id>","sig":"<Base64 Ed25519>"}]}
///     <policy bytes, to the end of the file>
///
/// The header is the canonical JSON of `{expiresAt, issuedAt, keyId, policyChunkSize,
/// policyChunksBlake2b256, policySize, serial}`. The signature covers DSSE's
/// pre-authentication encoding of the type and the exact header bytes, and the header the
/// exact policy bytes through a BLAKE2b-256 hash list (`BLAKE2b256.hashListHex`: one digest
/// per `policyChunkSize` bytes, and the digest of those): no re-serialisation anywhere, and
/// verifying costs one signature check over a few hundred bytes plus one digest pass over the
/// policy spread over every core, apart from parsing it. See docs/fleet.md.
public enum SignedBundle {
    /// The envelope's `payloadType`; also signed, so the key's other signatures cannot pass as bundles.
    public static let payloadType = "application/vnd.proctor.policy-bundle.v3+json"
    /// The chunk size `sign` uses: 4.6 MB of policy (10 000 apps) is 18 chunks, enough to keep
    /// every core of a small machine busy, and a 1 KiB policy one chunk (no thread involved).
    public static let chunkSize = 256 * 1024
    /// The chunk sizes a verifier accepts (powers of two): at least 64 KiB, so a header cannot
    /// make a policy millions of digests; at most 16 MiB, the policy size limit.
    public static let chunkSizes = (1 << 16)...(1 << 24)
    /// The longest envelope line accepted, newline included: a header and up to 16 signatures fit many times over.
    public static let maximumEnvelopeBytes = 16 * 1024
    /// The largest bundle accepted: the policy size limit plus the envelope line.
    public static let maximumBytes = PolicyLimits.maxDocumentBytes + maximumEnvelopeBytes
    /// Serials and times are JSON numbers: integers up to 2^53 - 1 are exact.
    static let maximumInteger = (1 << 53) - 1

    /// The bundle bytes signing `policy` with `key`: its canonical form plus a final newline is
    /// what is signed and shipped.
    public static func sign(_ policy: Policy, serial: Int, issuedAt: Int, expiresAt: Int,
                            with key: SigningKeyPair) -> [UInt8] {
        let policyBytes = policy.canonicalBytes + [UInt8(ascii: "\n")]
        let header = JSONValue.object([
            "expiresAt": .number(expiresAt), "issuedAt": .number(issuedAt), "keyId": .string(key.publicKey.keyID),
            "policyChunkSize": .number(chunkSize),
            "policyChunksBlake2b256": .string(BLAKE2b256.hashListHex(of: policyBytes[...], chunkSize: chunkSize)),
            "policySize": .number(policyBytes.count), "serial": .number(serial),
        ]).serialized()
        let signature = key.sign(preAuthenticationEncoding(header))
        let envelope = JSONValue.object([
            "payload": .string(Base64.encode(header)),
            "payloadType": .string(payloadType),
            "signatures": .array([.object(["keyid": .string(key.publicKey.keyID), "sig": .string(Base64.encode(signature))])]),
        ])
        return envelope.serialized() + [UInt8(ascii: "\n")] + policyBytes
    }

    /// Whether `bytes` look like a bundle rather than a plain policy: a first line (within
    /// `maximumEnvelopeBytes`) that is a JSON object with a `payloadType`. Only chooses how to
    /// read a file; whether a signature is required is decided by configuration
    /// (`RequireSignedBundles=`), never by this.
    public static func looksSigned(_ bytes: [UInt8]) -> Bool {
        guard let newline = envelopeEnd(bytes), let value = try? JSONParser.parse(Array(bytes[..<newline])) else { return false }
        return value["payloadType"] != nil
    }

    /// The index of the newline that ends the envelope line, if there is one within the limit.
    static func envelopeEnd(_ bytes: [UInt8]) -> Int? {
        bytes.prefix(maximumEnvelopeBytes).firstIndex(of: UInt8(ascii: "\n"))
    }

    /// DSSE's PAE: `"DSSEv1" SP len(type) SP type SP len(payload) SP payload`, lengths in decimal.
    static func preAuthenticationEncoding(_ payload: [UInt8]) -> [UInt8] {
        Array("DSSEv1 \(payloadType.utf8.count) \(payloadType) \(payload.count) ".utf8) + payload
    }
}
