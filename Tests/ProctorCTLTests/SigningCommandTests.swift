import Foundation
import Glibc
import ProctorBundle
import ProctorCrypto
import ProctorPolicy
import Testing
import TestSupport

/// `policy keygen` and `policy sign`, run as the built binary; the bundle is checked with the
/// library proctord uses.
@Suite struct SigningCommandTests {
    @Test func keygenWritesAPrivateKeyOnlyItsOwnerReadsAndRefusesToOverwrite() throws {
        let directory = try TemporaryDirectory()
        let prefix = directory.path + "/mdm"
        let made = try proctorctl(["policy", "keygen", "--out", prefix])
        #expect(made.status == 0, "\(made)")
        var status = stat()
        #expect(stat(prefix, &status) == 0 && status.st_mode & 0o777 == 0o600)
        let publicKey = try SigningPublicKey.load(from: prefix + ".pub")
        #expect(made.output == "key id \(publicKey.keyID): private key \(prefix), public key \(prefix).pub\n")
        #expect(try SigningKeyPair.load(privateKeyFrom: prefix).publicKey == publicKey)
        let publicText = try String(contentsOfFile: prefix + ".pub", encoding: .utf8)
        #expect(publicText.split(separator: "\n").count == 1)

        let again = try proctorctl(["policy", "keygen", "--out", prefix])
        #expect(again.status == 2)
        #expect(again.error.contains("mdm.pub exists; keys are never overwritten"), "\(again)")
        #expect(try SigningPublicKey.load(from: prefix + ".pub") == publicKey)
        // A stray PREFIX.pub alone also stops it, before a private key is written.
        try directory.write("other.pub", "x\n")
        #expect(try proctorctl(["policy", "keygen", "--out", directory.path + "/other"]).status == 2)
        #expect(access(directory.path + "/other", F_OK) != 0)
        #expect(try proctorctl(["policy", "keygen"]).error.contains("--out is required"))
    }

    @Test func signPrintsABundleThatVerifiesWithTheSerialAndLifetimeAsked() throws {
        let directory = try TemporaryDirectory()
        let prefix = directory.path + "/mdm"
        #expect(try proctorctl(["policy", "keygen", "--out", prefix]).status == 0)
        let key = try SigningPublicKey.load(from: prefix + ".pub")
        let before = Int(time(nil))
        let signed = try proctorctl(["policy", "sign", "--key", prefix, "--serial", "42", "--expires-in", "600",
                                     "config/examples"])
        #expect(signed.status == 0, "\(signed)")
        let verified = try BundleVerifier(trustedKeys: TrustedKeys([key]), lastAppliedSerial: 41)
            .verify(Array(signed.output.utf8), now: before)
        #expect(verified.serial == 42)
        #expect(try verified.readPolicy() == (try AdminFixtures.examplePolicy()))
        #expect(verified.expiresAt - verified.issuedAt == 600)
        #expect(verified.issuedAt >= before && verified.issuedAt <= Int(time(nil)))

        let defaults = try proctorctl(["policy", "sign", "--key", prefix, "config/policy.d"])
        let bundle = try BundleVerifier(trustedKeys: TrustedKeys([key]), lastAppliedSerial: 0)
            .verify(Array(defaults.output.utf8), now: before)
        #expect(bundle.serial == bundle.issuedAt)  // the default serial is the signing time
        #expect(bundle.expiresAt - bundle.issuedAt == 30 * 24 * 3600)
    }

    @Test func signRefusesBadOptionsAPolicyWithProblemsAndAKeyOthersCanRead() throws {
        let directory = try TemporaryDirectory()
        let prefix = directory.path + "/mdm"
        #expect(try proctorctl(["policy", "keygen", "--out", prefix]).status == 0)
        for (option, value) in [("--serial", "0"), ("--serial", "x"), ("--expires-in", "-5")] {
            let result = try proctorctl(["policy", "sign", "--key", prefix, option, value, "config/examples"])
            #expect(result.status == 2)
            #expect(result.error.contains("\(option) expects a whole number"), "\(result)")
        }
        let broken = try directory.write("broken.json", #"{"schema": 1}"#)
        let invalid = try proctorctl(["policy", "sign", "--key", prefix, broken])
        #expect(invalid.status == 2 && invalid.output.isEmpty)
        #expect(invalid.error.contains(broken), "\(invalid)")
        chmod(prefix, 0o644)
        let exposed = try proctorctl(["policy", "sign", "--key", prefix, "config/examples"])
        #expect(exposed.status == 2 && exposed.output.isEmpty)
        #expect(exposed.error.contains("must not be readable by others"), "\(exposed)")
    }
}
