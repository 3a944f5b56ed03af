import JSONCore
import ProctorPolicy
import Testing

/// Each setting resolved at each layer: the app's entry, then `defaults`, then the built-in
/// default, with the deciding rule path asserted every time.
@Suite struct EngineFallbackTests {
    enum Layer: String, CaseIterable { case app, defaults, builtin }

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        /// Puts the setting into a layer's settings.
        let set: @Sendable (inout AppSettings) -> Void
        let request: @Sendable (AppID) -> DecisionRequest
        /// The path under the layer (`.dlp.print`) or nil where only the built-in rule applies.
        let suffix: String
        let builtinRule: String
        /// Whether the request is allowed when the layer sets the value, and under the built-in default.
        let allowedWhenSet: Bool
        let allowedByBuiltin: Bool
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "clipboard.level", set: { $0.dlp.clipboardLevel = .any },
             request: { DecisionRequest(app: $0, action: .clipboardCopy, target: EngineFixtures.unknownTarget) },
             suffix: ".dlp.clipboard.level", builtinRule: "builtin.clipboard.level", allowedWhenSet: true, allowedByBuiltin: false),
        Case(name: "share.send", set: { $0.dlp.shareSend = ShareLevel.none },
             request: { DecisionRequest(app: $0, action: .shareSend, target: EngineFixtures.managedTarget) },
             suffix: ".dlp.share.send", builtinRule: "builtin.share.send", allowedWhenSet: false, allowedByBuiltin: true),
        Case(name: "share.receive", set: { $0.dlp.shareReceive = .any },
             request: { DecisionRequest(app: $0, action: .shareReceive, target: EngineFixtures.unknownTarget) },
             suffix: ".dlp.share.receive", builtinRule: "builtin.share.receive", allowedWhenSet: true, allowedByBuiltin: false),
        Case(name: "print", set: { $0.dlp.print = .block },
             request: { DecisionRequest(app: $0, action: .print) },
             suffix: ".dlp.print", builtinRule: "builtin.print", allowedWhenSet: false, allowedByBuiltin: true),
        Case(name: "screenCapture", set: { $0.dlp.screenCapture = .block },
             request: { DecisionRequest(app: $0, action: .screenCapture) },
             suffix: ".dlp.screenCapture", builtinRule: "builtin.screenCapture", allowedWhenSet: false, allowedByBuiltin: true),
        Case(name: "notifications", set: { $0.dlp.notifications = .blockOrgData },
             request: { DecisionRequest(app: $0, action: .notification, target: "org") },
             suffix: ".dlp.notifications", builtinRule: "builtin.notifications", allowedWhenSet: false, allowedByBuiltin: true),
        Case(name: "fileExport.allow", set: { $0.dlp.fileExportAllow = ["/srv/**"] },
             request: { DecisionRequest(app: $0, action: .fileExport, target: "/home/ann/x") },
             suffix: ".dlp.fileExport.allow", builtinRule: "builtin.fileExport.allow", allowedWhenSet: false, allowedByBuiltin: true),
        Case(name: "fileExport.deny", set: { $0.dlp.fileExportDeny = ["/home/**"] },
             request: { DecisionRequest(app: $0, action: .fileExport, target: "/home/ann/x") },
             suffix: ".dlp.fileExport.deny[0]", builtinRule: "builtin.fileExport.allow", allowedWhenSet: false, allowedByBuiltin: true),
        Case(name: "compliance.minVersion", set: { $0.compliance.minVersion = SemanticVersion("5.0.0") },
             request: { DecisionRequest(app: $0, action: .launch, appVersion: SemanticVersion("4.0.0")) },
             suffix: ".compliance.minVersion", builtinRule: "", allowedWhenSet: false, allowedByBuiltin: true),
    ]

    @Test(arguments: cases, Layer.allCases)
    func fallback(of setting: Case, at layer: Layer) {
        let asker = "com.test.fallback"
        var appSettings = AppSettings()
        var defaults = AppSettings()
        switch layer {
        case .app: setting.set(&appSettings)
        case .defaults: setting.set(&defaults)
        case .builtin: break
        }
        let engine = CompiledPolicy(EngineFixtures.policy(defaults: defaults,
                                                          [asker: AppPolicy(settings: appSettings)]))
        let decision = engine.decide(setting.request(asker))
        switch layer {
        case .app:
            #expect(decision.rule == EngineFixtures.appPath(asker) + setting.suffix)
            #expect(decision.allowed == setting.allowedWhenSet)
        case .defaults:
            #expect(decision.rule == "defaults" + setting.suffix)
            #expect(decision.allowed == setting.allowedWhenSet)
        case .builtin:
            // No minimum version has no rule of its own: the authorized state lets the app run.
            let builtin = setting.builtinRule.isEmpty ? EngineFixtures.appPath(asker) + ".state" : setting.builtinRule
            #expect(decision.rule == builtin)
            #expect(decision.allowed == setting.allowedByBuiltin)
        }
    }

    /// The app's value wins over `defaults`, which wins over the built-in default, setting by setting.
    @Test func appOverDefaultsOverBuiltinSettingBySetting() {
        let asker = "com.test.mixed"
        let defaults = AppSettings(dlp: DLPSettings(clipboardLevel: .blocked, clipboardCharLimit: 20, print: .block))
        let app = AppPolicy(settings: AppSettings(dlp: DLPSettings(clipboardLevel: .any)))
        let engine = CompiledPolicy(EngineFixtures.policy(defaults: defaults, [asker: app]))
        let copy = engine.decide(DecisionRequest(app: asker, action: .clipboardCopy, target: EngineFixtures.unknownTarget, size: 50))
        #expect(copy.allowed && copy.rule == EngineFixtures.appPath(asker) + ".dlp.clipboard.level")
        let print = engine.decide(DecisionRequest(app: asker, action: .print))
        #expect(!print.allowed && print.rule == "defaults.dlp.print")
        let capture = engine.decide(DecisionRequest(app: asker, action: .screenCapture))
        #expect(capture.allowed && capture.rule == "builtin.screenCapture")

        let other = "com.test.plain"
        let plain = CompiledPolicy(EngineFixtures.policy(defaults: defaults, [other: AppPolicy()]))
        let short = plain.decide(DecisionRequest(app: other, action: .clipboardCopy, target: EngineFixtures.unknownTarget, size: 20))
        #expect(short.allowed && short.rule == "defaults.dlp.clipboard.charLimit")
        let long = plain.decide(DecisionRequest(app: other, action: .clipboardCopy, target: EngineFixtures.unknownTarget, size: 21))
        #expect(!long.allowed && long.rule == "defaults.dlp.clipboard.level")
    }

    @Test func appIDsThatAreIdentifiersRenderWithDots() {
        // JSONPath renders a key that is an identifier with a dot; the engine must agree.
        let engine = CompiledPolicy(Policy(version: "1", apps: ["notes": AppPolicy(settings: AppSettings(dlp: DLPSettings(print: .block)))]))
        #expect(engine.decide(DecisionRequest(app: "notes", action: .print)).rule == "apps.notes.dlp.print")
    }
}
