import Foundation
import Glibc
import LinuxIO
import ProctorCrypto
import TestSupport
import Testing

@Suite struct SigningTests {
    /// RFC 8032 §7.1, test 1 (the empty message) and test 2 (one byte), as libsodium's own
    /// test/default/sign.c carries them.
    static let vectors: [(seed: String, publicKey: String, message: String, signature: String)] = [
        ("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
         "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
         "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
            + "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
        ("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
         "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
         "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
            + "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
    ]

    @Test(arguments: 0..<2) func rfc8032KnownAnswers(index: Int) throws {
        let vector = Self.vectors[index]
        let pair = try fromHex(vector.seed).withUnsafeBytes { try SigningKeyPair(seed: $0) }
        #expect(pair.publicKey.bytes == fromHex(vector.publicKey))
        let signature = pair.sign(fromHex(vector.message))
        #expect(signature == fromHex(vector.signature))
        try pair.publicKey.verify(signature: signature, of: fromHex(vector.message))
    }

    @Test func aChangedMessageOrSignatureOrKeyDoesNotVerify() throws {
        let pair = try SigningKeyPair.generate()
        let message = Array("serial=7 policy".utf8)
        let signature = pair.sign(message)
        try pair.publicKey.verify(signature: signature, of: message)
        var changed = message
        changed[0] ^= 1
        #expect(throws: CryptoError.signatureMismatch(keyID: pair.publicKey.keyID)) {
            try pair.publicKey.verify(signature: signature, of: changed)
        }
        var forged = signature
        forged[10] ^= 0x40
        #expect(throws: CryptoError.signatureMismatch(keyID: pair.publicKey.keyID)) {
            try pair.publicKey.verify(signature: forged, of: message)
        }
        let other = try SigningKeyPair.generate()
        #expect(throws: CryptoError.signatureMismatch(keyID: other.publicKey.keyID)) {
            try other.publicKey.verify(signature: signature, of: message)
        }
        #expect(throws: CryptoError.wrongLength(what: "an Ed25519 signature", expected: 64, actual: 63)) {
            try pair.publicKey.verify(signature: Array(signature.dropLast()), of: message)
        }
    }

    @Test func keyIDIsTheStartOfTheBLAKE2bHashOfThePublicKey() throws {
        let key = try SigningPublicKey(bytes: fromHex(Self.vectors[0].publicKey))
        #expect(key.keyID.count == 16)
        #expect(key.keyID.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        #expect(try SigningPublicKey(bytes: fromHex(Self.vectors[1].publicKey)).keyID != key.keyID)
        // The same key always gets the same id (it is written into files and bundles).
        #expect(try SigningPublicKey(bytes: fromHex(Self.vectors[0].publicKey)).keyID == key.keyID)
    }

    @Test func publicKeyTextRoundTripsAndIsChecked() throws {
        let key = try SigningKeyPair.generate().publicKey
        let parts = key.text.split(separator: " ")
        #expect(parts.count == 3 && parts[0] == "ed25519" && parts[1] == key.keyID[...])
        #expect(try SigningPublicKey(text: key.text + "\n") == key)
        let otherID = try SigningKeyPair.generate().publicKey.keyID
        #expect(throws: CryptoError.keyIDMismatch(source: "public key text", stated: otherID, actual: key.keyID)) {
            try SigningPublicKey(text: "ed25519 \(otherID) \(parts[2])")
        }
        for bad in ["", "ed25519 \(key.keyID)", "rsa \(key.keyID) \(parts[2])", "ed25519 \(key.keyID) !!!!",
                    "ed25519 \(key.keyID) \(parts[2].dropLast(4))", "ed25519  \(key.keyID) \(parts[2])"] {
            #expect(throws: CryptoError.self, "\(bad)") { try SigningPublicKey(text: bad) }
        }
    }

    @Test func keyFilesRoundTripWithPrivateModeAndRefuseToOverwrite() throws {
        let directory = try TemporaryDirectory()
        let prefix = directory.path + "/signing"
        let pair = try SigningKeyPair.generate()
        try pair.save(privateKeyTo: prefix)
        #expect(try fileMode(prefix) == 0o600)
        #expect(try fileMode(prefix + ".pub") == 0o644)
        let publicText = try String(contentsOfFile: prefix + ".pub", encoding: .utf8)
        #expect(publicText == pair.publicKey.text + "\n")

        let loaded = try SigningKeyPair.load(privateKeyFrom: prefix)
        #expect(loaded.publicKey == pair.publicKey)
        let message = Array("bundle".utf8)
        #expect(loaded.sign(message) == pair.sign(message))
        #expect(try SigningPublicKey.load(from: prefix + ".pub") == pair.publicKey)

        #expect(throws: CryptoError.keyFile(path: prefix, operation: "create", errno: .fileExists)) {
            try SigningKeyPair.generate().save(privateKeyTo: prefix)
        }
    }

    @Test func privateKeyFileReadableByOthersOrMangledIsRefused() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/signing"
        try SigningKeyPair.generate().save(privateKeyTo: path)
        chmod(path, 0o640)
        #expect(throws: CryptoError.insecureKeyFilePermissions(path: path, mode: 0o100640)) {
            try SigningKeyPair.load(privateKeyFrom: path)
        }
        chmod(path, 0o600)
        let line = try String(contentsOfFile: path, encoding: .utf8)
        let fields = line.split(separator: " ")
        let otherID = try SigningKeyPair.generate().publicKey.keyID
        try "ed25519-secret \(otherID) \(fields[2])".write(toFile: path, atomically: false, encoding: .utf8)
        #expect(throws: CryptoError.self) { try SigningKeyPair.load(privateKeyFrom: path) }
        do { _ = try SigningKeyPair.load(privateKeyFrom: path) } catch {
            guard case .keyIDMismatch(let source, let stated, _) = error else { Issue.record("\(error)"); return }
            #expect(source == path && stated == otherID)
        }
        try "ed25519-secret \(fields[1]) notbase64".write(toFile: path, atomically: false, encoding: .utf8)
        #expect(throws: CryptoError.malformedKey(source: path, reason: "the seed is not 32 bytes of Base64")) {
            try SigningKeyPair.load(privateKeyFrom: path)
        }
        #expect(throws: CryptoError.keyFile(path: path + ".missing", operation: "open", errno: .noSuchFileOrDirectory)) {
            try SigningKeyPair.load(privateKeyFrom: path + ".missing")
        }
    }
}

func fromHex(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        bytes.append(UInt8(text[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}

func fileMode(_ path: String) throws -> mode_t {
    var status = stat()
    guard stat(path, &status) == 0 else { throw Errno.current }
    return status.st_mode & 0o7777
}
