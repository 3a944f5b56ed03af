import ProctorPolicy
import Testing

/// Every action × every level × every kind of other party, against a table written out by hand.
@Suite struct EngineDecisionTableTests {
    /// The other parties of a data action, in the column order of the expectation strings.
    static let targets: [(name: String, id: String?)] = [
        ("same app", nil),  // replaced by the asking app's own id
        ("managed", EngineFixtures.managedTarget),
        ("unknown", EngineFixtures.unknownTarget),
        ("blocked", EngineFixtures.blockedTarget),
        ("retired", EngineFixtures.retiredTarget),
        ("none", nil),
    ]

    /// `Y` allowed, `N` denied, per column of `targets`.
    static let clipboardTable: [(Action, ClipboardLevel, String)] = [
        (.clipboardCopy, .blocked, "YNNNNN"),
        (.clipboardCopy, .managed, "YYNNNN"),
        (.clipboardCopy, .managedPasteIn, "YYNNNN"),
        (.clipboardCopy, .any, "YYYYYY"),
        (.clipboardPaste, .blocked, "YNNNNN"),
        (.clipboardPaste, .managed, "YYNNNN"),
        (.clipboardPaste, .managedPasteIn, "YYYYYY"),
        (.clipboardPaste, .any, "YYYYYY"),
    ]

    static let shareTable: [(Action, ShareLevel, String)] = [
        (.shareSend, .none, "YNNNNN"),
        (.shareSend, .managed, "YYNNNN"),
        (.shareSend, .any, "YYYYYY"),
        (.shareReceive, .none, "YNNNNN"),
        (.shareReceive, .managed, "YYNNNN"),
        (.shareReceive, .any, "YYYYYY"),
    ]

    @Test(arguments: clipboardTable)
    func clipboard(action: Action, level: ClipboardLevel, expected: String) {
        let id = "com.test.asker"
        let engine = CompiledPolicy(EngineFixtures.policy([id: EngineFixtures.app(DLPSettings(clipboardLevel: level))]))
        check(engine, id, action, expected, levelRule: EngineFixtures.appPath(id) + ".dlp.clipboard.level")
    }

    @Test(arguments: shareTable)
    func share(action: Action, level: ShareLevel, expected: String) {
        let id = "com.test.asker"
        let dlp = action == .shareSend ? DLPSettings(shareSend: level) : DLPSettings(shareReceive: level)
        let engine = CompiledPolicy(EngineFixtures.policy([id: EngineFixtures.app(dlp)]))
        let key = action == .shareSend ? ".dlp.share.send" : ".dlp.share.receive"
        check(engine, id, action, expected, levelRule: EngineFixtures.appPath(id) + key)
    }

    private func check(_ engine: CompiledPolicy, _ id: String, _ action: Action, _ expected: String, levelRule: String) {
        for (column, target) in Self.targets.enumerated() {
            let targetID = column == 0 ? id : target.id
            let decision = engine.decide(DecisionRequest(app: id, action: action, target: targetID, size: 5))
            let allowed = Array(expected)[column] == "Y"
            #expect(decision.allowed == allowed, "\(action.rawValue) to/from \(target.name)")
            #expect(decision.rule == (column == 0 ? "builtin.sameApp" : levelRule), "\(action.rawValue) \(target.name)")
            #expect(decision.violation == nil)
            #expect(!decision.reason.isEmpty && decision.reason.hasSuffix("."))
        }
    }

    @Test(arguments: [(Toggle.allow, true), (Toggle.block, false)])
    func printAndScreenCapture(toggle: Toggle, allowed: Bool) {
        let id = "com.test.asker"
        let engine = CompiledPolicy(EngineFixtures.policy([id: EngineFixtures.app(DLPSettings(print: toggle, screenCapture: toggle))]))
        for (action, key) in [(Action.print, ".dlp.print"), (.screenCapture, ".dlp.screenCapture")] {
            for target in Self.targets.map(\.id) {
                let decision = engine.decide(DecisionRequest(app: id, action: action, target: target))
                #expect(decision.allowed == allowed)
                #expect(decision.rule == EngineFixtures.appPath(id) + key)
            }
        }
    }

    /// `Y` allowed, `N` denied, per target: `org`, `plain`, none, something else.
    static let notificationTable: [(NotificationLevel, String)] = [
        (.allow, "YYNN"),
        (.blockOrgData, "NYNN"),
        (.block, "NNNN"),
    ]

    @Test(arguments: notificationTable)
    func notification(level: NotificationLevel, expected: String) {
        let id = "com.test.asker"
        let engine = CompiledPolicy(EngineFixtures.policy([id: EngineFixtures.app(DLPSettings(notifications: level))]))
        for (column, target) in ["org", "plain", nil, EngineFixtures.managedTarget].enumerated() {
            let decision = engine.decide(DecisionRequest(app: id, action: .notification, target: target))
            #expect(decision.allowed == (Array(expected)[column] == "Y"), "\(level.rawValue) \(target ?? "none")")
            #expect(decision.rule == (column < 2 ? EngineFixtures.appPath(id) + ".dlp.notifications" : "builtin.notification.target"))
            #expect(decision.violation == nil)
            #expect(!decision.reason.isEmpty && decision.reason.hasSuffix("."))
        }
    }

    /// A blocked or retired app is denied every action by its state, whatever its settings.
    @Test(arguments: [AppState.blocked, .retired])
    func appThatIsNotAuthorized(state: AppState) {
        let id = "com.test.asker"
        let permissive = DLPSettings(clipboardLevel: .any, clipboardCharLimit: 100, shareSend: .any, shareReceive: .any,
                                     print: .allow, screenCapture: .allow, fileExportAllow: ["/**"], notifications: .allow)
        let engine = CompiledPolicy(EngineFixtures.policy([id: EngineFixtures.app(permissive, state: state)]))
        for action in Action.allCases {
            for target in [id, EngineFixtures.managedTarget, "/home/ann/a.txt", "plain", nil] {
                let decision = engine.decide(DecisionRequest(app: id, action: action, target: target, size: 1,
                                                             appVersion: SemanticVersion("9.9.9")))
                #expect(!decision.allowed, "\(state) \(action.rawValue)")
                #expect(decision.rule == EngineFixtures.appPath(id) + ".state")
                #expect(decision.reason.contains(state.rawValue))
            }
        }
        #expect(!engine.isManaged(id))
        #expect(engine.appPolicy(id)?.state == state)
    }

    @Test func unknownAppIsDeniedEverything() {
        let engine = CompiledPolicy(EngineFixtures.policy(defaults: AppSettings(dlp: DLPSettings(clipboardLevel: .any, print: .allow))))
        for action in Action.allCases {
            for target in [EngineFixtures.unknownTarget, EngineFixtures.managedTarget, "/tmp/a", "plain", nil] {
                let decision = engine.decide(DecisionRequest(app: EngineFixtures.unknownTarget, action: action, target: target))
                #expect(!decision.allowed)
                #expect(decision.rule == "builtin.unknownApp")
            }
        }
        #expect(!engine.isManaged(EngineFixtures.unknownTarget))
        #expect(engine.appPolicy(EngineFixtures.unknownTarget) == nil)
        #expect(engine.effectiveRules(for: EngineFixtures.unknownTarget) == nil)
    }

    @Test func managedMeansAuthorizedInPolicy() {
        let engine = CompiledPolicy(EngineFixtures.policy())
        #expect(engine.isManaged(EngineFixtures.managedTarget))
        #expect(!engine.isManaged(EngineFixtures.blockedTarget))
        #expect(!engine.isManaged(EngineFixtures.retiredTarget))
        #expect(engine.managedAppIDs == [EngineFixtures.managedTarget])
    }

    @Test func launchOfAnAuthorizedAppWithoutMinimum() {
        let engine = CompiledPolicy(EngineFixtures.policy())
        let decision = engine.decide(DecisionRequest(app: EngineFixtures.managedTarget, action: .launch))
        #expect(decision == Decision(allowed: true, rule: EngineFixtures.appPath(EngineFixtures.managedTarget) + ".state",
                                     reason: "The app is authorized to run."))
    }
}
