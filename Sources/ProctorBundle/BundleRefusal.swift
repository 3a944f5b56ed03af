/// Why a signed policy bundle was not applied. Each case is one kind of attack or mistake, with
/// the facts an operator needs; none carries key material. `name` is stable (logs, Varlink).
public enum BundleRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    /// The bytes are not a bundle: not JSON, a field missing or of the wrong type, not Base64,
    /// too large — a truncated download lands here.
    case malformed(String)
    /// The envelope's `payloadType` is not a Proctor policy bundle: a signature made for
    /// something else must not be accepted as one.
    case wrongPayloadType(String)
    /// No signature is by a key in the trust directory (`keyIDs`: the ones the bundle names).
    case unknownKey(keyIDs: [String])
    /// A signature by the trusted key `keyID` does not verify: the bundle was altered.
    case badSignature(keyID: String)
    /// The payload names another signer than the trusted key whose signature verified.
    case signerMismatch(stated: String, verified: String)
    /// `serial` is not greater than the last applied serial: a replay of an older bundle
    /// (TUF's rollback attack).
    case rollback(serial: Int, lastApplied: Int)
    /// The bundle expired at `expiresAt` (Unix seconds); it is `now`: updates may be held back
    /// (TUF's freeze attack).
    case expired(expiresAt: Int, now: Int)
    /// The signed policy itself has problems (one line each).
    case invalidPolicy([String])
    /// Signed bundles are required (`RequireSignedBundles=yes`) and this policy is not one.
    case unsigned

    /// A stable, short name of the reason: `bad-signature`, `rollback`, ...
    public var name: String {
        switch self {
        case .malformed: "malformed"
        case .wrongPayloadType: "wrong-payload-type"
        case .unknownKey: "unknown-key"
        case .badSignature: "bad-signature"
        case .signerMismatch: "signer-mismatch"
        case .rollback: "rollback"
        case .expired: "expired"
        case .invalidPolicy: "invalid-policy"
        case .unsigned: "unsigned"
        }
    }

    public var description: String {
        switch self {
        case .malformed(let reason):
            "not a signed bundle: \(reason)"
        case .wrongPayloadType(let type):
            "the bundle's payloadType is \"\(type)\", expected \"\(SignedBundle.payloadType)\""
        case .unknownKey(let keyIDs):
            keyIDs.isEmpty ? "the bundle carries no signature"
                : "no signature is by a trusted key (signed by \(keyIDs.joined(separator: ", ")); "
                    + "trusted keys are the *.pub files in keys.d"
        case .badSignature(let keyID):
            "the signature by trusted key \(keyID) does not verify: the bundle was altered"
        case .signerMismatch(let stated, let verified):
            "the payload names signer \(stated) but the verified signature is by \(verified)"
        case .rollback(let serial, let lastApplied):
            "serial \(serial) is not greater than the last applied serial \(lastApplied): an old bundle replayed (rollback)"
        case .expired(let expiresAt, let now):
            "the bundle expired \(now - expiresAt) s ago (expiresAt \(expiresAt)): updates may be held back (freeze)"
        case .invalidPolicy(let problems):
            "the signed policy is invalid: " + problems.joined(separator: "; ")
        case .unsigned:
            "RequireSignedBundles=yes: only a signed bundle may be applied, this is a plain policy"
        }
    }
}
