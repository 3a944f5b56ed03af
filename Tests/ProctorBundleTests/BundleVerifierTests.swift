import Foundation
import JSONCore
import ProctorBundle
import ProctorCrypto
import ProctorPolicy
import TestSupport
import Testing

@Suite struct BundleVerifierTests {
    static let now = 1_800_000_000
    let key = try! SigningKeyPair.generate()

    static func policy(_ version: String = "2026-11-30.1") throws -> Policy {
        try Policy.parse(Array(#"{"schema": 1, "version": "\#(version)", "defaults": {"dlp": {"print": "block"}}}"#.utf8),
                         source: "test")
    }

    func bundle(serial: Int = 7, expiresAt: Int = now + 3600, signedWith signer: SigningKeyPair? = nil) throws -> [UInt8] {
        SignedBundle.sign(try Self.policy(), serial: serial, issuedAt: Self.now - 10, expiresAt: expiresAt, with: signer ?? key)
    }

    func verifier(_ keys: [SigningPublicKey]? = nil, lastApplied: Int = 0) -> BundleVerifier {
        BundleVerifier(trustedKeys: TrustedKeys(keys ?? [key.publicKey]), lastAppliedSerial: lastApplied)
    }

    func refusal(_ bytes: [UInt8], _ verifier: BundleVerifier) -> BundleRefusal? {
        do { _ = try verifier.verify(bytes, now: Self.now); return nil } catch { return error }
    }

    /// The envelope as a JSON object, to alter one field.
    func envelope(_ bytes: [UInt8]) throws -> [String: JSONValue] { try JSONParser.parse(bytes).objectValue! }

    @Test func aGoodBundleVerifiesWithItsPolicyAndSignedFacts() throws {
        let verified = try verifier().verify(try bundle(serial: 42), now: Self.now)
        #expect(verified.policy == (try Self.policy()))
        #expect(verified.serial == 42)
        #expect(verified.issuedAt == Self.now - 10)
        #expect(verified.expiresAt == Self.now + 3600)
        #expect(verified.keyID == key.publicKey.keyID)
        #expect(SignedBundle.looksSigned(try bundle()))
        #expect(!SignedBundle.looksSigned((try Self.policy()).canonicalBytes))
    }

    @Test func anAlteredPayloadOrSignatureIsABadSignature() throws {
        var object = try envelope(try bundle())
        var payload = Base64.decode(object["payload"]!.stringValue!)!
        let text = String(decoding: payload, as: UTF8.self).replacingOccurrences(of: "\"block\"", with: "\"allow\"")
        payload = Array(text.utf8)
        object["payload"] = .string(Base64.encode(payload))
        #expect(refusal(JSONValue.object(object).serialized(), verifier()) == .badSignature(keyID: key.publicKey.keyID))

        var signatureAltered = try envelope(try bundle())
        var signature = Base64.decode((signatureAltered["signatures"]!.arrayValue![0]["sig"]!.stringValue)!)!
        signature[5] ^= 0x40
        signatureAltered["signatures"] = .array([.object(["keyid": .string(key.publicKey.keyID),
                                                          "sig": .string(Base64.encode(signature))])])
        #expect(refusal(JSONValue.object(signatureAltered).serialized(), verifier())
            == .badSignature(keyID: key.publicKey.keyID))
    }

    @Test func aBundleByAnUntrustedKeyIsAnUnknownKey() throws {
        let stranger = try SigningKeyPair.generate()
        #expect(refusal(try bundle(signedWith: stranger), verifier())
            == .unknownKey(keyIDs: [stranger.publicKey.keyID]))
        // No trusted key at all: still refused, never "nothing configured, so accept".
        #expect(refusal(try bundle(), verifier([])) == .unknownKey(keyIDs: [key.publicKey.keyID]))
        var unsigned = try envelope(try bundle())
        unsigned["signatures"] = .array([])
        #expect(refusal(JSONValue.object(unsigned).serialized(), verifier()) == .unknownKey(keyIDs: []))
    }

    @Test func aSignatureCopiedUnderATrustedKeysNameDoesNotVerify() throws {
        // An attacker signs with their key but labels the signature with the trusted key id.
        let stranger = try SigningKeyPair.generate()
        var object = try envelope(try bundle(signedWith: stranger))
        let sig = object["signatures"]!.arrayValue![0]["sig"]!
        object["signatures"] = .array([.object(["keyid": .string(key.publicKey.keyID), "sig": sig])])
        #expect(refusal(JSONValue.object(object).serialized(), verifier()) == .badSignature(keyID: key.publicKey.keyID))
    }

    @Test(arguments: [7, 8]) func aSerialNotAboveTheLastAppliedIsARollback(lastApplied: Int) throws {
        #expect(refusal(try bundle(serial: 7), verifier(lastApplied: lastApplied))
            == .rollback(serial: 7, lastApplied: lastApplied))
        #expect(refusal(try bundle(serial: lastApplied + 1), verifier(lastApplied: lastApplied)) == nil)
    }

    @Test func anExpiredBundleIsAFreeze() throws {
        #expect(refusal(try bundle(expiresAt: Self.now), verifier()) == .expired(expiresAt: Self.now, now: Self.now))
        #expect(refusal(try bundle(expiresAt: Self.now - 1), verifier()) == .expired(expiresAt: Self.now - 1, now: Self.now))
        #expect(refusal(try bundle(expiresAt: Self.now + 1), verifier()) == nil)
    }

    @Test func aTruncatedBundleIsMalformed() throws {
        let whole = try bundle()
        for length in [0, 1, whole.count / 2, whole.count - 3] {
            guard case .malformed = refusal(Array(whole.prefix(length)), verifier()) else {
                Issue.record("a bundle truncated to \(length) bytes was not refused as malformed")
                continue
            }
        }
    }

    @Test func malformedEnvelopesSayWhichFieldIsWrong() throws {
        let good = try envelope(try bundle())
        let cases: [(String, JSONValue?, String)] = [
            ("payload", nil, "payload: missing, expected a Base64 string"),
            ("payload", .string("not base64!"), "payload: expected Base64"),
            ("signatures", .object([:]), "signatures: expected an array, found an object"),
            ("signatures", .array([.string("x")]), "signatures[0]: expected an object"),
            ("payloadType", .number(3), "payloadType: expected a string, found a number"),
        ]
        for (key, value, message) in cases {
            var object = good
            object[key] = value
            guard case .malformed(let reason) = refusal(JSONValue.object(object).serialized(), verifier()) else {
                Issue.record("\(key) = \(String(describing: value)) was not refused as malformed")
                continue
            }
            #expect(reason.hasPrefix(message), "\(reason)")
        }
        #expect(refusal(Array("[1]".utf8), verifier()) == .malformed("expected a JSON object, found an array"))
    }

    @Test func anotherPayloadTypeIsRefusedEvenWhenSignedByATrustedKey() throws {
        // A signature the same key made for another purpose must not pass as a bundle: the
        // type is part of what is signed, and checked first.
        var object = try envelope(try bundle())
        object["payloadType"] = .string("application/vnd.proctor.cached-view+json")
        #expect(refusal(JSONValue.object(object).serialized(), verifier())
            == .wrongPayloadType("application/vnd.proctor.cached-view+json"))
    }

    @Test func keyRotationAcceptsEitherTrustedKey() throws {
        let next = try SigningKeyPair.generate()
        let both = verifier([key.publicKey, next.publicKey], lastApplied: 5)
        #expect(try both.verify(try bundle(serial: 6), now: Self.now).keyID == key.publicKey.keyID)
        #expect(try both.verify(try bundle(serial: 7, signedWith: next), now: Self.now).keyID == next.publicKey.keyID)
        // After the old key is retired, its bundles are refused.
        #expect(refusal(try bundle(serial: 8), verifier([next.publicKey], lastApplied: 7))
            == .unknownKey(keyIDs: [key.publicKey.keyID]))
    }

    @Test func anInvalidSignedPolicyIsRefusedWithItsProblems() throws {
        let payload = JSONValue.object(["expiresAt": .number(Self.now + 60), "issuedAt": .number(Self.now),
                                        "keyId": .string(key.publicKey.keyID), "serial": 9,
                                        "policy": .object(["schema": 99])]).serialized()
        let message = Array("DSSEv1 \(SignedBundle.payloadType.utf8.count) \(SignedBundle.payloadType) \(payload.count) ".utf8)
            + payload
        let envelope = JSONValue.object([
            "payload": .string(Base64.encode(payload)), "payloadType": .string(SignedBundle.payloadType),
            "signatures": .array([.object(["keyid": .string(key.publicKey.keyID),
                                           "sig": .string(Base64.encode(key.sign(message)))])]),
        ]).serialized()
        guard case .invalidPolicy(let problems) = refusal(envelope, verifier()) else {
            Issue.record("an invalid policy was not refused")
            return
        }
        #expect(!problems.isEmpty)
    }

    @Test func trustedKeysLoadFromADirectoryOfPubFiles() throws {
        let directory = try TemporaryDirectory()
        #expect(try TrustedKeys.load(directory: directory.appending("missing").path).keys.isEmpty)
        let other = try SigningKeyPair.generate()
        try key.save(privateKeyTo: directory.appending("a").path)
        try other.save(privateKeyTo: directory.appending("b").path)
        let keys = try TrustedKeys.load(directory: directory.path)
        // Only *.pub files: the private keys beside them are not read.
        #expect(Set(keys.keys.keys) == [key.publicKey.keyID, other.publicKey.keyID])
        try Data("ed25519 0000 garbage\n".utf8).write(to: directory.appending("c.pub"))
        #expect(throws: CryptoError.self) { try TrustedKeys.load(directory: directory.path) }
    }
}
