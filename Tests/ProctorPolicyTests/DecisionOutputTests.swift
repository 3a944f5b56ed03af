import JSONCore
import ProctorPolicy
import Testing

@Suite struct DecisionOutputTests {
    @Test func jsonCarriesViolationOnlyWhenSet() {
        let plain = Decision(allowed: false, rule: "builtin.unknownApp", reason: "Nope.")
        #expect(plain.json == ["allowed": false, "rule": "builtin.unknownApp", "reason": "Nope."])
        let warned = Decision(allowed: true, rule: "apps.x.compliance.minVersion", reason: "Old.", violation: .warn)
        #expect(warned.json == ["allowed": true, "rule": "apps.x.compliance.minVersion", "reason": "Old.", "violation": "warn"])
    }

    @Test func effectiveRulesResolveEveryLayer() throws {
        let asker = "com.example.notes"
        let defaults = AppSettings(dlp: DLPSettings(clipboardCharLimit: 40, shareExempt: ["com.partner.*"], fileExportDeny: ["/tmp/**"]),
                                   compliance: ComplianceSettings(offlineGraceSeconds: 3600))
        let app = AppPolicy(settings: AppSettings(
            dlp: DLPSettings(clipboardLevel: .managedPasteIn, print: .block, fileExportAllow: ["/home/*/Work/**"],
                             fileExportEnforcement: .kernel),
            compliance: ComplianceSettings(minVersion: SemanticVersion("2.3.0"), onViolation: .warn)))
        let engine = CompiledPolicy(EngineFixtures.policy(defaults: defaults, [asker: app]))
        let expected: JSONValue = [
            "dlp": [
                "clipboard": ["level": "managed-paste-in", "charLimit": 40],
                "share": ["send": "managed", "receive": "managed", "exempt": ["com.partner.*"]],
                "print": "block",
                "screenCapture": "allow",
                "fileExport": ["allow": ["/home/*/Work/**"], "deny": ["/tmp/**"], "enforcement": "kernel"],
                "notifications": "allow",
            ],
            "compliance": ["minVersion": "2.3.0", "onViolation": "warn", "offlineGraceSeconds": 3600],
        ]
        #expect(engine.effectiveRules(for: asker) == expected)

        // Without allow list or minimum those keys are absent, not empty; enforcement is advisory.
        let plain = try #require(engine.effectiveRules(for: EngineFixtures.managedTarget))
        #expect(plain["dlp"]?["fileExport"] == ["deny": ["/tmp/**"], "enforcement": "advisory"])
        #expect(plain["compliance"] == ["onViolation": "block", "offlineGraceSeconds": 3600])
    }
}
