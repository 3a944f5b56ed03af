import LinuxIO
import ProctorBundle
import ProctorCrypto
import ProctorPolicy

/// A signed bundle of the 10 000-app policy, three ways:
/// - `bundle.verify`: the verification proper — envelope line, Ed25519 over the header, key id,
///   the BLAKE2b-256 pass over the policy bytes, serial and expiry (`BundleVerifier.verify`);
/// - `bundle.apply`: that, then reading the policy and compiling it — what proctord does
///   before it persists and swaps in a pulled bundle;
/// - `bundle.policyParse`: reading the same policy as a plain document, for comparison.
enum BundleBench: BenchCommand {
    static let name = "bundle"
    static let summary = "signed bundle verification, and verify+parse+compile, time (ms) for 10 000 apps"
    static let appCount = 10_000

    static func run(_ options: BenchOptions, report: (Figure) -> Void) throws {
        let policy = SyntheticPolicy(appCount: appCount).policy
        let key = try SigningKeyPair.generate()
        let bundle = SignedBundle.sign(policy, serial: 2, issuedAt: 0, expiresAt: Int.max >> 12, with: key)
        let verifier = BundleVerifier(trustedKeys: TrustedKeys([key.publicKey]), lastAppliedSerial: 1)
        let runs = options.quick ? 5 : 30
        report(Figure(name: "bundle.verify.apps\(appCount)", unit: "ms", samples: try measure(runs) {
            let verified = try verifier.verify(bundle, now: 1)
            precondition(verified.serial == 2)
        }))
        report(Figure(name: "bundle.apply.apps\(appCount)", unit: "ms", samples: try measure(runs) {
            let opened = try verifier.open(bundle, now: 1)
            precondition(CompiledPolicy(opened.policy).appCount == appCount)
        }))
        let document = policy.canonicalBytes
        report(Figure(name: "bundle.policyParse.apps\(appCount)", unit: "ms", samples: try measure(runs) {
            let parsed = try Policy.parse(document, source: nil)
            precondition(parsed.version == policy.version)
        }))
    }

    /// `runs` timings of `body` in milliseconds.
    private static func measure(_ runs: Int, _ body: () throws -> Void) rethrows -> [Double] {
        try (0..<runs).map { _ in
            let began = MonotonicClock.nanoseconds()
            try body()
            return Double(MonotonicClock.nanoseconds() - began) / 1_000_000
        }
    }
}
