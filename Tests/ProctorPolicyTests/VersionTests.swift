@testable import ProctorPolicy
import Testing

@Suite struct VersionTests {
    static func version(_ text: String) -> SemanticVersion {
        guard let version = SemanticVersion(text) else {
            Issue.record("\(text) should parse")
            return SemanticVersion(major: 0, minor: 0, patch: 0)
        }
        return version
    }

    @Test func numericComponentsCompareNumerically() {
        #expect(Self.version("2.10.0") > Self.version("2.9.9"))
        #expect(Self.version("10.0.0") > Self.version("9.99.99"))
        #expect(Self.version("2.3") == Self.version("2.3.0"))
    }

    @Test func preReleaseOrdering() {
        let ordered = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
                       "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0"].map(Self.version)
        for (lower, higher) in zip(ordered, ordered.dropFirst()) {
            #expect(lower < higher, "\(lower) < \(higher)")
            #expect(!(higher < lower))
        }
    }

    @Test func buildMetadataDoesNotCount() {
        #expect(Self.version("1.0.0+abc") == Self.version("1.0.0+def"))
        #expect(!(Self.version("1.0.0+abc") < Self.version("1.0.0")))
    }

    @Test(arguments: ["", "1", "1.2.3.4", "01.2.3", "1.2.x", "1.2.3-", "1.2.3-01", "1.2.3+", "-1.2.3"])
    func invalidVersionsDoNotParse(text: String) {
        #expect(SemanticVersion(text) == nil)
    }

    /// The byte-level path for plain `MAJOR.MINOR[.PATCH]` either declines or gives exactly
    /// what the general parser gives (every field, build metadata included), over every
    /// string of up to five characters from an alphabet of digits, dots and the other signs.
    @Test func thePlainPathAgreesWithTheGeneralParser() {
        let alphabet: [Character] = ["0", "1", "9", ".", "-", "+", "a"]
        var texts: [String] = [""], tried = 0
        for _ in 0..<5 {
            texts = texts.flatMap { text in alphabet.map { text + String($0) } }
            for text in texts {
                let general = SemanticVersion.parsed(text)
                if let plain = SemanticVersion.plain(text) {
                    #expect(general.map { [$0.major, $0.minor, $0.patch] } == [plain.major, plain.minor, plain.patch], "\(text)")
                    #expect(general?.preRelease == [] && general?.build == [], "\(text)")
                } else if text.allSatisfy({ $0.isNumber || $0 == "." }) {
                    #expect(general == nil, "\(text): digits and dots the plain path declines are not a version")
                }
                tried += 1
            }
        }
        #expect(tried > 19_000)
        #expect(SemanticVersion.plain("999999999.0.10") == SemanticVersion(major: 999_999_999, minor: 0, patch: 10))
        #expect(SemanticVersion.plain("1234567890.0.0") == nil && SemanticVersion("1234567890.0.0") == nil)
    }

    static let asker = "com.test.versioned"

    /// (onViolation, reported version, allowed, violation)
    static let launchCases: [(Violation, String?, Bool, Violation?)] = [
        (.block, "2.3.0", true, nil),        // equal meets the minimum
        (.block, "2.10.0", true, nil),
        (.block, "2.3.0-rc.1", false, .block), // a pre-release sorts below its release
        (.block, "2.2.9", false, .block),
        (.warn, "2.2.9", true, .warn),
        (.wipe, "2.2.9", false, .wipe),
        (.block, nil, false, .block),        // no version while a minimum is set is a violation
        (.warn, nil, true, .warn),
        (.wipe, nil, false, .wipe),
    ]

    @Test(arguments: launchCases)
    func launchAgainstMinVersion(onViolation: Violation, reported: String?, allowed: Bool, violation: Violation?) {
        let compliance = ComplianceSettings(minVersion: Self.version("2.3.0"), onViolation: onViolation)
        let engine = CompiledPolicy(EngineFixtures.policy([Self.asker: EngineFixtures.app(compliance: compliance)]))
        let decision = engine.decide(DecisionRequest(app: Self.asker, action: .launch, appVersion: reported.map(Self.version)))
        #expect(decision.allowed == allowed)
        #expect(decision.violation == violation)
        #expect(decision.rule == EngineFixtures.appPath(Self.asker) + ".compliance.minVersion")
    }

    @Test func onViolationFallsBackToBuiltinBlock() {
        let engine = CompiledPolicy(EngineFixtures.policy([Self.asker: EngineFixtures.app(
            compliance: ComplianceSettings(minVersion: Self.version("3.0.0")))]))
        let decision = engine.decide(DecisionRequest(app: Self.asker, action: .launch, appVersion: Self.version("2.0.0")))
        #expect(!decision.allowed)
        #expect(decision.violation == .block)
    }
}
