import LinuxIO
import ProctorBundle
import ProctorCrypto
import ProctorPolicy

/// Verifying a signed bundle of the 10 000-app policy: envelope parse, Base64, Ed25519 over the
/// payload, payload parse and the policy's validation — everything `BundleVerifier.verify`
/// does before proctord compiles and applies the policy.
enum BundleBench: BenchCommand {
    static let name = "bundle"
    static let summary = "signed bundle verification time (ms) for 10 000 apps"
    static let appCount = 10_000

    static func run(_ options: BenchOptions, report: (Figure) -> Void) throws {
        let policy = SyntheticPolicy(appCount: appCount).policy
        let key = try SigningKeyPair.generate()
        let bundle = SignedBundle.sign(policy, serial: 2, issuedAt: 0, expiresAt: Int.max >> 12, with: key)
        let verifier = BundleVerifier(trustedKeys: TrustedKeys([key.publicKey]), lastAppliedSerial: 1)
        let runs = options.quick ? 5 : 30
        var samples: [Double] = []
        for _ in 0..<runs {
            let began = MonotonicClock.nanoseconds()
            let verified = try verifier.verify(bundle, now: 1)
            samples.append(Double(MonotonicClock.nanoseconds() - began) / 1_000_000)
            precondition(verified.serial == 2)
        }
        report(Figure(name: "bundle.verify.apps\(appCount)", unit: "ms", samples: samples))
        // What reading the same policy as a plain document costs: the share of the figure above
        // that is policy parsing and validation rather than the bundle and its signature.
        let document = policy.canonicalBytes
        var parses: [Double] = []
        for _ in 0..<runs {
            let began = MonotonicClock.nanoseconds()
            let parsed = try Policy.parse(document, source: nil)
            parses.append(Double(MonotonicClock.nanoseconds() - began) / 1_000_000)
            precondition(parsed.version == policy.version)
        }
        report(Figure(name: "bundle.policyParse.apps\(appCount)", unit: "ms", samples: parses))
    }
}
