import ProctorPolicy
import Testing

@Suite struct EngineClipboardAndShareTests {
    static let asker = "com.test.asker"

    static func engine(_ dlp: DLPSettings) -> CompiledPolicy {
        CompiledPolicy(EngineFixtures.policy([asker: EngineFixtures.app(dlp)]))
    }

    static func copy(_ engine: CompiledPolicy, size: Int?, to target: String? = EngineFixtures.unknownTarget) -> Decision {
        engine.decide(DecisionRequest(app: asker, action: .clipboardCopy, target: target, size: size))
    }

    static let levelRule = EngineFixtures.appPath(asker) + ".dlp.clipboard.level"
    static let limitRule = EngineFixtures.appPath(asker) + ".dlp.clipboard.charLimit"

    /// (level, charLimit, size, allowed, decided by the limit)
    static let charLimitCases: [(ClipboardLevel, Int, Int?, Bool, Bool)] = [
        (.managed, 0, 0, false, false),       // 0 is no allowance, even for an empty copy
        (.managed, 0, 1, false, false),
        (.managed, 10, 9, true, true),
        (.managed, 10, 10, true, true),       // equal to the limit
        (.managed, 10, 11, false, false),     // one over
        (.managed, 10, nil, false, false),    // unknown size never fits
        (.managed, 10, -1, false, false),     // nonsense size never fits
        (.managedPasteIn, 10, 10, true, true),
        (.managedPasteIn, 10, 11, false, false),
        (.blocked, 10, 10, true, true),       // "whatever the level", blocked included
        (.blocked, 10, 11, false, false),
        (.any, 10, 11, true, false),          // the level allows; the limit is not needed
    ]

    @Test(arguments: charLimitCases)
    func charLimitToAnUnmanagedApp(level: ClipboardLevel, limit: Int, size: Int?, allowed: Bool, byLimit: Bool) {
        let decision = Self.copy(Self.engine(DLPSettings(clipboardLevel: level, clipboardCharLimit: limit)), size: size)
        #expect(decision.allowed == allowed)
        #expect(decision.rule == (byLimit ? Self.limitRule : Self.levelRule))
    }

    @Test func charLimitDoesNotApplyToPaste() {
        let engine = Self.engine(DLPSettings(clipboardLevel: .managed, clipboardCharLimit: 100))
        let decision = engine.decide(DecisionRequest(app: Self.asker, action: .clipboardPaste, target: EngineFixtures.unknownTarget, size: 1))
        #expect(!decision.allowed)
        #expect(decision.rule == Self.levelRule)
    }

    @Test func copyToAManagedAppIsDecidedByTheLevelNotTheLimit() {
        let decision = Self.copy(Self.engine(DLPSettings(clipboardLevel: .managed, clipboardCharLimit: 10)),
                                 size: 5000, to: EngineFixtures.managedTarget)
        #expect(decision.allowed)
        #expect(decision.rule == Self.levelRule)
    }

    static let exempt = ["com.partner.*", "org.trusted.viewer", "*.archive"]

    /// (level, other app, allowed, index of the exempt entry that decided)
    static let exemptCases: [(ShareLevel, String?, Bool, Int?)] = [
        (.managed, "com.partner.mail", true, 0),
        (.managed, "com.partner.", true, 0),           // `*` matches an empty run
        (.managed, "com.partnerx.mail", false, nil),
        (.managed, "org.trusted.viewer", true, 1),
        (.managed, "org.trusted.viewer2", false, nil),
        (.managed, "xorg.trusted.viewer", false, nil),
        (.managed, "net.example.archive", true, 2),
        (.managed, "com.partner.archive", true, 0),    // the first matching entry decides
        (.managed, EngineFixtures.blockedTarget, false, nil),
        (.managed, EngineFixtures.managedTarget, true, nil),
        (.managed, nil, false, nil),
        (.none, "com.partner.mail", false, nil),       // exemption widens `managed` only
        (.any, "org.elsewhere.chat", true, nil),
    ]

    @Test(arguments: exemptCases, [Action.shareSend, .shareReceive])
    func exemptGlobs(_ row: (ShareLevel, String?, Bool, Int?), action: Action) {
        let (level, other, allowed, exemptIndex) = row
        let dlp = action == .shareSend ? DLPSettings(shareSend: level, shareExempt: Self.exempt)
                                       : DLPSettings(shareReceive: level, shareExempt: Self.exempt)
        let decision = Self.engine(dlp).decide(DecisionRequest(app: Self.asker, action: action, target: other))
        #expect(decision.allowed == allowed)
        let levelKey = action == .shareSend ? ".dlp.share.send" : ".dlp.share.receive"
        let expectedRule = exemptIndex.map { ".dlp.share.exempt[\($0)]" } ?? levelKey
        #expect(decision.rule == EngineFixtures.appPath(Self.asker) + expectedRule)
    }

    /// U+212A KELVIN SIGN is canonically equivalent to "K": `String`'s `==` and a `[String: …]`
    /// key find "com.test.\u{212A}it" equal to "com.test.Kit", yet it is another target (not
    /// even an app id). The app itself, a managed app and an exempt one are named by their bytes.
    @Test func aTargetIsNamedByItsBytes() {
        let asker = "com.test.Kit", kelvin = "com.test.\u{212A}it"
        let engine = CompiledPolicy(EngineFixtures.policy([
            asker: EngineFixtures.app(DLPSettings(clipboardLevel: .managed, shareSend: .managed, shareExempt: ["org.Kde.viewer"])),
        ]))
        let copy = engine.decide(DecisionRequest(app: asker, action: .clipboardCopy, target: kelvin, size: 1))
        #expect(!copy.allowed && copy.rule == EngineFixtures.appPath(asker) + ".dlp.clipboard.level")
        let share = engine.decide(DecisionRequest(app: asker, action: .shareSend, target: "org.\u{212A}de.viewer"))
        #expect(!share.allowed && share.rule == EngineFixtures.appPath(asker) + ".dlp.share.send")
        #expect(engine.decide(DecisionRequest(app: asker, action: .shareSend, target: "org.Kde.viewer")).allowed)
    }

    /// Two exempt literals that are one string to `==` but other bytes are two entries: each
    /// target names the one spelt as it is.
    @Test func exemptLiteralsAreFoundByTheirBytes() {
        let asker = "com.test.asker"
        let engine = CompiledPolicy(EngineFixtures.policy([
            asker: EngineFixtures.app(DLPSettings(shareSend: .managed, shareExempt: ["org.\u{212A}de.viewer", "org.Kde.viewer"])),
        ]))
        for (target, entry) in [("org.\u{212A}de.viewer", 0), ("org.Kde.viewer", 1)] {
            let decision = engine.decide(DecisionRequest(app: asker, action: .shareSend, target: target))
            #expect(decision.allowed && decision.rule == EngineFixtures.appPath(asker) + ".dlp.share.exempt[\(entry)]", "\(target)")
        }
        #expect(!engine.decide(DecisionRequest(app: asker, action: .shareSend, target: "org.kde.viewer")).allowed)
    }

    @Test func exemptBlockedAppCountsAsAllowed() {
        let engine = Self.engine(DLPSettings(shareSend: .managed, shareExempt: ["com.example.*"]))
        let decision = engine.decide(DecisionRequest(app: Self.asker, action: .shareSend, target: EngineFixtures.blockedTarget))
        #expect(decision.allowed)
        #expect(decision.rule == EngineFixtures.appPath(Self.asker) + ".dlp.share.exempt[0]")
    }
}
