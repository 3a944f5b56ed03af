@testable import ProctorKit
import Testing

/// The planning half of kernel-enforced export rules: which directory a pattern confines writes
/// to, and what a new rule asks of the layers in force (the kernel half: KernelExportEnforcementTests).
@Suite struct ExportConfinementTests {
    @Test(arguments: [
        ("/home/*/Documents/Work/**", "/home/ann", "/home/ann/Documents/Work"),
        ("/home/*/Documents/Work/**", "/srv/users/ann", "/home"),
        ("/home/*/Documents/Work/**", nil, "/home"),
        ("/srv/export/app1/*.pdf", "/home/ann", "/srv/export/app1"),
        ("/tmp/**", "/home/ann", "/tmp"),
        ("/a/**/z", "/home/ann", "/a"),
        ("/home/an*/x", "/home/ann", "/home/ann/x"),
        ("/home/bo*/x", "/home/ann", "/home"),
        ("/*/x", "/home/ann", "/home/x"),
        ("/media/*/*/x", "/home/ann", "/media"),
        ("/srv/x*\u{301}/z", "/home/ann", "/srv"),  // "*" then a combining mark is one Character, still a wildcard
    ] as [(String, String?, String)])
    func aPatternConfinesWritesToItsLiteralDirectoryResolvedForTheUser(pattern: String, home: String?, directory: String) {
        #expect(ExportConfinement.writableDirectory(of: pattern, home: home) == directory)
    }

    @Test func layersOnlyTighten() {
        var confinement = ExportConfinement()
        #expect(confinement.actions(for: nil) == [], "advisory and not confined: nothing to do")
        #expect(confinement.actions(for: ["/data", "/export"]) == [.restrict(["/data", "/export"])])
        confinement.restricted(["/data", "/export"])
        #expect(confinement.actions(for: ["/data", "/export"]) == [], "the same rule again")
        #expect(confinement.actions(for: ["/data", "/export/sub"]) == [.restrict(["/data", "/export/sub"])], "narrower")
        confinement.restricted(["/data", "/export/sub"])
        #expect(confinement.allows("/export/sub/file") && !confinement.allows("/export/other"))

        // Wider again: the kernel keeps the narrower layer; a restart is needed.
        #expect(confinement.actions(for: ["/data", "/export"]) == [.askRestart(
            reason: "the export rule now allows writing to /export, which the kernel keeps refusing until the app restarts")])
        // Both at once: the narrowing is applied now, the widening waits for the restart.
        let mixed = confinement.actions(for: ["/export/sub/deeper", "/elsewhere"])
        #expect(mixed.first == .restrict(["/export/sub/deeper", "/elsewhere"]) && mixed.count == 2)
        #expect(confinement.actions(for: nil).count == 1, "advisory again: a restart")

        confinement.landlockUnavailable()
        #expect(confinement.actions(for: ["/x"]) == [], "without Landlock nothing more is tried")
    }

    @Test func beneathComparesComponents() {
        #expect("/export/sub".isBeneath("/export") && "/export".isBeneath("/export") && "/x".isBeneath("/"))
        #expect(!"/exported".isBeneath("/export"))
    }

    /// The kernel confines by the bytes of a path, while `String`'s `==` and `hasPrefix` compare by
    /// canonical equivalence and Characters: "café" composed and decomposed are two directories.
    @Test func beneathComparesBytes() {
        let composed = "/data/caf\u{E9}", decomposed = "/data/cafe\u{301}"
        #expect(!composed.isBeneath(decomposed) && !"\(composed)/x".isBeneath(decomposed))
        #expect(!"/data/a/\u{301}x".isBeneath("/data/a/\u{301}") && !"/data/a\u{301}".isBeneath("/data/a"))
        #expect("/data/a/\u{301}x".isBeneath("/data/a"), "\"/\" then a combining mark is still a component boundary")

        // A rule moved to the other spelling allows another directory: a new layer, and a restart.
        var confinement = ExportConfinement()
        confinement.restricted([composed])
        #expect(confinement.actions(for: [decomposed]) == [.restrict([decomposed]), .askRestart(
            reason: "the export rule now allows writing to \(decomposed), which the kernel keeps refusing until the app restarts")])
    }
}
