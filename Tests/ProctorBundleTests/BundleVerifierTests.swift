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

    /// The envelope line as a JSON object, to alter one field, and the policy bytes after it.
    func envelope(_ bytes: [UInt8]) throws -> [String: JSONValue] {
        try JSONParser.parse(Array(bytes[..<bytes.firstIndex(of: 10)!])).objectValue!
    }

    func policyPart(_ bytes: [UInt8]) -> [UInt8] { Array(bytes[(bytes.firstIndex(of: 10)! + 1)...]) }

    /// A bundle of `envelope` (altered) and `policy`, joined as `SignedBundle.sign` does.
    func joined(_ envelope: [String: JSONValue], _ policy: [UInt8]) -> [UInt8] {
        JSONValue.object(envelope).serialized() + [10] + policy
    }

    /// A bundle whose header (`members`, signed with `key`) and policy bytes are chosen by the test.
    func signed(_ members: [String: JSONValue], policy: [UInt8]) -> [UInt8] {
        let header = JSONValue.object(members).serialized()
        let message = Array("DSSEv1 \(SignedBundle.payloadType.utf8.count) \(SignedBundle.payloadType) \(header.count) ".utf8)
            + header
        return joined(["payload": .string(Base64.encode(header)), "payloadType": .string(SignedBundle.payloadType),
                       "signatures": .array([.object(["keyid": .string(key.publicKey.keyID),
                                                      "sig": .string(Base64.encode(key.sign(message)))])])], policy)
    }

    /// A correct header for `policy`.
    func header(for policy: [UInt8], serial: Int = 9) -> [String: JSONValue] {
        ["expiresAt": .number(Self.now + 60), "issuedAt": .number(Self.now), "keyId": .string(key.publicKey.keyID),
         "policyChunkSize": .number(SignedBundle.chunkSize),
         "policyChunksBlake2b256": .string(BLAKE2b256.hashListHex(of: policy[...], chunkSize: SignedBundle.chunkSize)),
         "policySize": .number(policy.count), "serial": .number(serial)]
    }

    @Test func aGoodBundleVerifiesWithItsSignedFactsAndOpensToItsPolicy() throws {
        let bytes = try bundle(serial: 42)
        let verified = try verifier().verify(bytes, now: Self.now)
        #expect(verified.serial == 42)
        #expect(verified.issuedAt == Self.now - 10)
        #expect(verified.expiresAt == Self.now + 3600)
        #expect(verified.keyID == key.publicKey.keyID)
        // The policy travels as its exact bytes after the envelope line: the canonical form and a newline.
        #expect(Array(verified.policyBytes) == (try Self.policy()).canonicalBytes + [10])
        #expect(try verified.readPolicy() == (try Self.policy()))
        let opened = try verifier().open(bytes, now: Self.now)
        #expect(opened.policy == (try Self.policy()))
        #expect(opened.bundle.serial == 42)
        #expect(SignedBundle.looksSigned(bytes))
        #expect(!SignedBundle.looksSigned((try Self.policy()).canonicalBytes))
        #expect(!SignedBundle.looksSigned(Array("{\n  \"schema\": 1\n}\n".utf8)))
    }

    @Test func anAlteredHeaderSignatureOrPolicyIsABadSignature() throws {
        let good = try bundle()
        var object = try envelope(good)
        var payload = Base64.decode(object["payload"]!.stringValue!)!
        let text = String(decoding: payload, as: UTF8.self).replacingOccurrences(of: "\"serial\":7", with: "\"serial\":8")
        #expect(text != String(decoding: payload, as: UTF8.self))
        payload = Array(text.utf8)
        object["payload"] = .string(Base64.encode(payload))
        #expect(refusal(joined(object, policyPart(good)), verifier()) == .badSignature(keyID: key.publicKey.keyID))

        var signatureAltered = try envelope(good)
        var signature = Base64.decode((signatureAltered["signatures"]!.arrayValue![0]["sig"]!.stringValue)!)!
        signature[5] ^= 0x40
        signatureAltered["signatures"] = .array([.object(["keyid": .string(key.publicKey.keyID),
                                                          "sig": .string(Base64.encode(signature))])])
        #expect(refusal(joined(signatureAltered, policyPart(good)), verifier()) == .badSignature(keyID: key.publicKey.keyID))

        // The policy bytes changed, same length: the signed digest no longer matches.
        let altered = Array(String(decoding: policyPart(good), as: UTF8.self)
            .replacingOccurrences(of: "\"block\"", with: "\"allow\"").utf8)
        #expect(altered.count == policyPart(good).count && altered != policyPart(good))
        #expect(refusal(joined(try envelope(good), altered), verifier()) == .badSignature(keyID: key.publicKey.keyID))
        // Even with the serial in force: an altered bundle is never taken for the one applied.
        #expect(refusal(joined(try envelope(good), altered), verifier(lastApplied: 7)) == .badSignature(keyID: key.publicKey.keyID))
    }

    /// A policy of several chunks (≈ 690 KB: three 256 KiB chunks, the last shorter), signed.
    func largeBundle() throws -> (bytes: [UInt8], policyStart: Int) {
        let apps = (0..<10_000).map { #""com.example.app\#($0)": {"state": "authorized", "dlp": {"print": "block"}}"# }
        let text = #"{"schema": 1, "version": "large.1", "apps": {"# + apps.joined(separator: ", ") + "}}"
        let policy = try Policy.parse(Array(text.utf8), source: "test")
        let bytes = SignedBundle.sign(policy, serial: 7, issuedAt: Self.now - 10, expiresAt: Self.now + 3600, with: key)
        let start = bytes.firstIndex(of: 10)! + 1
        #expect(bytes.count - start > 2 * SignedBundle.chunkSize, "the policy spans at least three chunks")
        return (bytes, start)
    }

    @Test func aPolicyOfSeveralChunksVerifiesAndOneAlteredChunkIsABadSignature() throws {
        let (good, start) = try largeBundle()
        #expect(try verifier().open(good, now: Self.now).policy.apps.count == 10_000)
        // One byte changed in each chunk in turn (the last byte of the first, the middle of the
        // second, the last byte of the policy), the length unchanged.
        let chunk = SignedBundle.chunkSize
        for offset in [start + chunk - 1, start + chunk + chunk / 2, good.count - 2] {
            var altered = good
            altered[offset] ^= 0x01
            #expect(refusal(altered, verifier()) == .badSignature(keyID: key.publicKey.keyID), "byte \(offset - start)")
        }
    }

    @Test func reorderedChunksAreABadSignature() throws {
        let (good, start) = try largeBundle()
        let chunk = SignedBundle.chunkSize
        // The first two chunks swapped: the same bytes and the same chunk digests, in another order.
        let first = good[start..<(start + chunk)], second = good[(start + chunk)..<(start + 2 * chunk)]
        let swapped = Array(good[..<start] + second + first + good[(start + 2 * chunk)...])
        #expect(swapped.count == good.count && swapped != good)
        #expect(refusal(swapped, verifier()) == .badSignature(keyID: key.publicKey.keyID))
    }

    @Test func aChunkDroppedOrCutIsMalformedBeforeAnyHashing() throws {
        let (good, start) = try largeBundle()
        let policyLength = good.count - start
        let chunk = SignedBundle.chunkSize
        let withoutSecond = Array(good[..<(start + chunk)] + good[(start + 2 * chunk)...])
        #expect(refusal(withoutSecond, verifier())
            == .malformed("the policy is \(policyLength - chunk) bytes, the signed header says \(policyLength); truncated?"))
        // Cut at a chunk boundary: the list of what is left would be well formed, but not the signed size.
        #expect(refusal(Array(good.prefix(start + chunk)), verifier())
            == .malformed("the policy is \(chunk) bytes, the signed header says \(policyLength); truncated?"))
    }

    @Test func aHeaderClaimingAnotherChunkSizeIsABadSignature() throws {
        // A validly signed header whose chunk size is not the one the digest was made with.
        let policy = (try Self.policy()).canonicalBytes + [10]
        var members = header(for: policy)
        members["policyChunkSize"] = .number(SignedBundle.chunkSize * 2)
        // A policy shorter than both chunk sizes is one chunk either way: the same digest, accepted.
        #expect(refusal(signed(members, policy: policy), verifier()) == nil)
        let large = Array(repeating: UInt8(ascii: " "), count: SignedBundle.chunkSize + 10) + policy
        members = header(for: large)
        members["policyChunkSize"] = .number(SignedBundle.chunkSize * 2)
        #expect(refusal(signed(members, policy: large), verifier()) == .badSignature(keyID: key.publicKey.keyID))
    }

    @Test func aBundleByAnUntrustedKeyIsAnUnknownKey() throws {
        let stranger = try SigningKeyPair.generate()
        #expect(refusal(try bundle(signedWith: stranger), verifier())
            == .unknownKey(keyIDs: [stranger.publicKey.keyID]))
        // No trusted key at all: still refused, never "nothing configured, so accept".
        #expect(refusal(try bundle(), verifier([])) == .unknownKey(keyIDs: [key.publicKey.keyID]))
        let good = try bundle()
        var unsigned = try envelope(good)
        unsigned["signatures"] = .array([])
        #expect(refusal(joined(unsigned, policyPart(good)), verifier()) == .unknownKey(keyIDs: []))
    }

    @Test func aSignatureCopiedUnderATrustedKeysNameDoesNotVerify() throws {
        // An attacker signs with their key but labels the signature with the trusted key id.
        let stranger = try SigningKeyPair.generate()
        let theirs = try bundle(signedWith: stranger)
        var object = try envelope(theirs)
        let sig = object["signatures"]!.arrayValue![0]["sig"]!
        object["signatures"] = .array([.object(["keyid": .string(key.publicKey.keyID), "sig": sig])])
        #expect(refusal(joined(object, policyPart(theirs)), verifier()) == .badSignature(keyID: key.publicKey.keyID))
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
        let envelopeLength = whole.firstIndex(of: 10)!
        for length in [0, 1, envelopeLength / 2, envelopeLength, envelopeLength + 1, whole.count - whole.count / 4, whole.count - 1] {
            guard case .malformed = refusal(Array(whole.prefix(length)), verifier()) else {
                Issue.record("a bundle truncated to \(length) bytes was not refused as malformed")
                continue
            }
        }
    }

    @Test func aTruncatedPolicySaysHowManyBytesWereSigned() throws {
        let whole = try bundle()
        let policyLength = policyPart(whole).count
        #expect(refusal(Array(whole.dropLast(5)), verifier())
            == .malformed("the policy is \(policyLength - 5) bytes, the signed header says \(policyLength); truncated?"))
        #expect(refusal(whole + [10], verifier())
            == .malformed("the policy is \(policyLength + 1) bytes, the signed header says \(policyLength); truncated?"))
    }

    @Test func malformedSignedHeadersSayWhichMemberIsWrong() throws {
        let policy = (try Self.policy()).canonicalBytes + [10]
        let good = header(for: policy)
        #expect(refusal(signed(good, policy: policy), verifier()) == nil)
        let cases: [(String, JSONValue?, String)] = [
            ("serial", nil, "payload.serial: missing, expected an integer"),
            ("serial", .number(0), "payload.serial: expected a positive integer, found 0"),
            ("expiresAt", .string("soon"), "payload.expiresAt: expected an integer, found a string"),
            ("policySize", .number(-1), "payload.policySize: expected an integer from 0 to 2^53-1, found -1"),
            ("policyChunksBlake2b256", .string("ABC"), "payload.policyChunksBlake2b256: expected 64 lower-case hex digits"),
            ("policyChunksBlake2b256", nil, "payload.policyChunksBlake2b256: missing, expected a BLAKE2b-256 digest in hex"),
            ("policyChunkSize", nil, "payload.policyChunkSize: missing, expected an integer"),
            ("policyChunkSize", .number(32_768), "payload.policyChunkSize: expected a power of two from 65536 to 16777216, found 32768"),
            ("policyChunkSize", .number(1 << 25), "payload.policyChunkSize: expected a power of two from 65536 to 16777216, found 33554432"),
            ("policyChunkSize", .number(100_000), "payload.policyChunkSize: expected a power of two from 65536 to 16777216, found 100000"),
            ("keyId", .number(1), "payload.keyId: expected a key id string, found a number"),
            ("policy", .object([:]), "payload.policy: unknown member; expected only expiresAt, issuedAt, keyId, "
                + "policyChunkSize, policyChunksBlake2b256, policySize, serial"),
            ("policyBlake2b256", .string(String(repeating: "0", count: 64)), "payload.policyBlake2b256: unknown member; "
                + "expected only expiresAt, issuedAt, keyId, policyChunkSize, policyChunksBlake2b256, policySize, serial"),
        ]
        for (member, value, message) in cases {
            var members = good
            members[member] = value
            #expect(refusal(signed(members, policy: policy), verifier()) == .malformed(message), "\(member)")
        }
    }

    @Test func malformedEnvelopesSayWhichFieldIsWrong() throws {
        let bytes = try bundle()
        let good = try envelope(bytes)
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
            guard case .malformed(let reason) = refusal(joined(object, policyPart(bytes)), verifier()) else {
                Issue.record("\(key) = \(String(describing: value)) was not refused as malformed")
                continue
            }
            #expect(reason.hasPrefix(message), "\(reason)")
        }
        #expect(refusal(Array("[1]\n{}".utf8), verifier()) == .malformed("expected a JSON object, found an array"))
        guard case .malformed(let noLine) = refusal((try Self.policy()).canonicalBytes, verifier()) else {
            Issue.record("a plain policy was not refused as malformed")
            return
        }
        #expect(noLine.hasPrefix("expected a signed envelope on the first line"))
    }

    @Test(arguments: ["application/vnd.proctor.cached-view+json", "application/vnd.proctor.policy-bundle.v2+json"])
    func anotherPayloadTypeIsRefusedEvenWhenSignedByATrustedKey(type: String) throws {
        // A signature the same key made for another purpose must not pass as a bundle: the
        // type is part of what is signed, and checked first. So is a v2 bundle (one BLAKE2b-256
        // over the whole policy): re-signing makes a v3 one.
        let good = try bundle()
        var object = try envelope(good)
        object["payloadType"] = .string(type)
        #expect(refusal(joined(object, policyPart(good)), verifier()) == .wrongPayloadType(type))
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

    @Test func anInvalidSignedPolicyVerifiesButIsRefusedWhenRead() throws {
        // Verification never parses the policy; reading it (before applying) finds its problems.
        let policy = Array(#"{"schema": 99}"#.utf8)
        let bytes = signed(header(for: policy), policy: policy)
        let verified = try verifier().verify(bytes, now: Self.now)
        #expect(Array(verified.policyBytes) == policy)
        for result in [Result { () throws(BundleRefusal) in try verified.readPolicy() },
                       Result { () throws(BundleRefusal) in try verifier().open(bytes, now: Self.now).policy }] {
            guard case .failure(.invalidPolicy(let problems)) = result else {
                Issue.record("an invalid policy was not refused")
                continue
            }
            #expect(!problems.isEmpty)
        }
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
