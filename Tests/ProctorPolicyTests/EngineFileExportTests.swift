import ProctorPolicy
import Testing

@Suite struct EngineFileExportTests {
    static let asker = "com.test.exporter"
    static let prefix = EngineFixtures.appPath(asker) + ".dlp.fileExport"

    static let engine = CompiledPolicy(EngineFixtures.policy([asker: EngineFixtures.app(DLPSettings(
        fileExportAllow: ["/home/*/Documents/Work/**", "/srv/export/*.pdf", "/data/**/reports/*"],
        fileExportDeny: ["/home/*/Documents/Work/Secret/**", "/tmp/**"]))]))

    /// (path, allowed, rule suffix after `…dlp.fileExport` or a full `builtin.` rule)
    static let cases: [(String?, Bool, String)] = [
        ("/home/ann/Documents/Work/a.txt", true, ".allow[0]"),
        ("/home/ann/Documents/Work/deep/er/a.txt", true, ".allow[0]"),     // `**` spans folders
        ("/home/ann/Documents/Work", true, ".allow[0]"),                   // `**` matches zero folders
        ("/home/ann/bob/Documents/Work/a.txt", false, ".allow"),          // `*` does not cross `/`
        ("/home/Documents/Work/a.txt", false, ".allow"),                  // `*` needs its segment
        ("/srv/export/report.pdf", true, ".allow[1]"),
        ("/srv/export/sub/report.pdf", false, ".allow"),                  // `*` stays in one segment
        ("/srv/export/report.pdf.txt", false, ".allow"),
        ("/data/reports/q1", true, ".allow[2]"),                          // `/**/` as zero folders
        ("/data/a/b/c/reports/q1", true, ".allow[2]"),
        ("/data/a/reports/q1/x", false, ".allow"),
        ("/home/ann/Documents/Work/Secret/plan.txt", false, ".deny[0]"),  // deny wins over allow
        ("/home/ann/Documents/Work/Secret", false, ".deny[0]"),
        ("/home/ann/Documents/Work/../Work/Secret/plan.txt", false, ".deny[0]"),
        ("/home/ann/Documents/Work/x/../../Work/Secret/plan.txt", false, ".deny[0]"),
        ("/home/ann/Documents/Work/../../.ssh/id_rsa", false, ".allow"),   // `..` escapes the allowed folder
        ("/home/ann/Documents/Work/../Work/a.txt", true, ".allow[0]"),
        ("/tmp/../home/ann/Documents/Work/a.txt", true, ".allow[0]"),      // `..` leaves the denied folder
        ("/../../../tmp/x", false, ".deny[1]"),                           // `..` stops at the root
        ("/tmp", false, ".deny[1]"),
        ("/tmp/", false, ".deny[1]"),
        ("/tmp/a/b/", false, ".deny[1]"),
        ("/home/ann/Documents/Work/a.txt/", true, ".allow[0]"),            // trailing slash
        ("//home//ann/Documents/./Work///a.txt", true, ".allow[0]"),
        ("/", false, ".allow"),
        ("Documents/Work/a.txt", false, "builtin.fileExport.relativePath"),
        ("./home/ann/Documents/Work/a.txt", false, "builtin.fileExport.relativePath"),
        ("~/Documents/Work/a.txt", false, "builtin.fileExport.relativePath"),
        ("", false, "builtin.fileExport.relativePath"),
        (nil, false, "builtin.fileExport.relativePath"),
        ("/" + String(repeating: "a", count: 4096), false, "builtin.fileExport.pathTooLong"),
    ]

    @Test(arguments: cases)
    func allowAndDenyLists(path: String?, allowed: Bool, rule: String) {
        let decision = Self.engine.decide(DecisionRequest(app: Self.asker, action: .fileExport, target: path))
        #expect(decision.allowed == allowed)
        #expect(decision.rule == (rule.hasPrefix("builtin.") ? rule : Self.prefix + rule))
    }

    @Test func withoutAnAllowListEverythingNotDeniedPasses() {
        let engine = CompiledPolicy(EngineFixtures.policy([Self.asker: EngineFixtures.app(DLPSettings(fileExportDeny: ["/tmp/**"]))]))
        let allowed = engine.decide(DecisionRequest(app: Self.asker, action: .fileExport, target: "/home/ann/x"))
        #expect(allowed.allowed)
        #expect(allowed.rule == "builtin.fileExport.allow")
        let denied = engine.decide(DecisionRequest(app: Self.asker, action: .fileExport, target: "/tmp/x"))
        #expect(!denied.allowed)
        #expect(denied.rule == Self.prefix + ".deny[0]")
    }

    @Test func anEmptyAllowListLetsNothingPass() {
        let engine = CompiledPolicy(EngineFixtures.policy([Self.asker: EngineFixtures.app(DLPSettings(fileExportAllow: []))]))
        let decision = engine.decide(DecisionRequest(app: Self.asker, action: .fileExport, target: "/home/ann/x"))
        #expect(!decision.allowed)
        #expect(decision.rule == Self.prefix + ".allow")
    }

    @Test func aPathOfExactlyTheLimitIsMatched() {
        let path = "/" + String(repeating: "a", count: CompiledPolicy.maxExportPathBytes - 1)
        let decision = CompiledPolicy(EngineFixtures.policy([Self.asker: EngineFixtures.app()]))
            .decide(DecisionRequest(app: Self.asker, action: .fileExport, target: path))
        #expect(decision.allowed)
        #expect(decision.rule == "builtin.fileExport.allow")
    }
}
