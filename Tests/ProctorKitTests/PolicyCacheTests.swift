import Foundation
import JSONCore
import ProctorPolicy
import ProctorProtocol
import Testing
import TestSupport
@testable import ProctorKit

/// The SDK's pure parts: what it accepts from proctord, how it compiles the cached rules,
/// what a wipe may remove, and how it backs off.
@Suite struct AgentUpdateTests {
    static let reply: [String: JSONValue] = [
        "session": "s1", "state": "authorized", "policyVersion": "7", "config": ["syncDays": 3],
        "dlp": ["clipboard": ["level": "managed", "charLimit": 0], "print": "block"],
        "compliance": ["offlineGraceSeconds": 60],
        "launch": ["allowed": true, "rule": "apps[\"com.example.notes\"].state", "reason": "The app is authorized."],
        "directives": [["id": "w1", "issuedAt": "2026-11-29T10:00:00Z"]],
        "managedApps": ["com.example.mail", "com.example.notes"],
        "view": ["payload": "{}", "signature": ""],
    ]

    @Test func readsACompleteReply() throws {
        let update = AgentUpdate(try Agent.Register.Reply(Self.reply))
        #expect(update.reason == .current)
        #expect(update.state == .authorized)
        #expect(update.directives == [WipeDirective(id: "w1", issuedAt: "2026-11-29T10:00:00Z", cause: .administrator)])
        #expect(update.offlineGraceSeconds == 60)
        #expect(update.launch.allowed && update.launch.violation == nil)
    }

    @Test func readsTheLaunchVerdictsViolation() throws {
        var reply = Self.reply
        reply["launch"] = ["allowed": true, "rule": "r", "reason": "below", "violation": "warn"]
        let update = AgentUpdate(try Agent.Register.Reply(reply))
        #expect(update.launch == Decision(allowed: true, rule: "r", reason: "below", violation: .warn))
        #expect(ComplianceState(update.launch) == .warning(reason: "below"))
        reply["launch"] = ["allowed": false, "rule": "r", "reason": "below", "violation": "erase"]
        #expect(throws: MalformedMessage.self) { try Agent.Register.Reply(reply) }
    }

    @Test(arguments: ["session", "state", "policyVersion", "config", "dlp", "compliance", "launch", "directives", "managedApps"])
    func aMissingFieldIsNamed(_ field: String) {
        var reply = Self.reply
        reply[field] = nil
        #expect(throws: MalformedMessage.self) { try Agent.Register.Reply(reply) }
        do {
            _ = try Agent.Register.Reply(reply)
        } catch {
            #expect(error.field == field)
        }
    }

    @Test func anUnknownStateIsRefused() {
        var reply = Self.reply
        reply["state"] = "paused"
        #expect(throws: MalformedMessage.self) { try Agent.Register.Reply(reply) }
    }

    @Test func compiledCacheDecidesLikeTheWholePolicy() throws {
        let whole = try Policy.parse(Array("""
            {"schema": 1, "version": "7",
             "defaults": {"dlp": {"share": {"send": "none"}}},
             "apps": {"com.example.notes": {"dlp": {"clipboard": {"level": "managed", "charLimit": 4}, "print": "block"}},
                      "com.example.mail": {}, "com.example.old": {"state": "retired"}}}
            """.utf8), source: nil)
        let engine = CompiledPolicy(whole)
        let rules = try #require(engine.effectiveRules(for: "com.example.notes"))
        let update = AgentUpdate(try Agent.Register.Reply(["session": "s1", "state": "authorized", "policyVersion": "7", "config": [:],
                                             "dlp": rules["dlp"]!, "compliance": rules["compliance"]!,
                                             "launch": ["allowed": true, "rule": "builtin.state", "reason": "authorized"], "directives": [],
                                             "managedApps": .array(engine.managedAppIDs.map(JSONValue.string)),
                                             "view": ["payload": "{}", "signature": ""]]))
        let cache = try update.compile(for: "com.example.notes")
        for action in Action.allCases where action != .launch {
            for target in ["com.example.mail", "com.example.old", "com.example.notes", "org.other", "/home/a/x", "org", "plain", nil] as [String?] {
                for size in [nil, 4, 5] as [Int?] {
                    let request = DecisionRequest(app: "com.example.notes", action: action, target: target, size: size)
                    #expect(cache.decide(request).allowed == engine.decide(request).allowed, "\(request)")
                }
            }
        }
    }
}

@Suite struct DataGuardTests {
    @Test func deniesEverythingBeforeRegistration() {
        let guardian = DataGuard()
        #expect(guardian.canPrint() == Decision(allowed: false, rule: DataGuard.notRegisteredRule, reason: guardian.canPrint().reason))
        #expect(!guardian.canCopy(to: "com.example.mail", length: 1).allowed)
    }

    @Test func offlinePastTheGracePeriodDenies() throws {
        let guardian = DataGuard()
        let update = AgentUpdate(try Agent.Register.Reply(AgentUpdateTests.reply))
        // What registering (again, after a reconnection) does.
        func register() throws {
            guardian.install(try update.compile(for: "com.example.notes"), for: "com.example.notes", offlineGraceSeconds: 60)
        }
        try register()
        #expect(guardian.canCopy(to: "com.example.mail", length: 10).allowed)
        guardian.connectionLost(at: .now - .seconds(30))
        #expect(guardian.canCopy(to: "com.example.mail", length: 10).allowed)
        try register()
        guardian.connectionLost(at: .now - .seconds(61))
        #expect(guardian.canCopy(to: "com.example.mail", length: 10).rule == DataGuard.offlineGraceRule)
        try register()
        #expect(guardian.canCopy(to: "com.example.mail", length: 10).allowed)
    }

    @Test func exportResolvesSymbolicLinksFirst() throws {
        let folder = try TemporaryDirectory()
        let real = folder.appending("real")
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: folder.appending("link").path, withDestinationPath: real.path)
        let resolvedFolder = try #require(DataWiper.resolved(real.path))
        #expect(DataGuard.resolvingSymbolicLinks(folder.appending("link/new.txt").path) == resolvedFolder + "/new.txt")
        #expect(DataGuard.resolvingSymbolicLinks("/no/such/folder/file") == "/no/such/folder/file")
        #expect(DataGuard.resolvingSymbolicLinks("relative/file") == "relative/file")
    }
}

@Suite struct DataWiperTests {
    @Test func removesOnlyWhatLiesInsideTheHomeOrStateDirectories() throws {
        let root = try TemporaryDirectory()
        let home = root.appending("home").path
        let state = root.appending("state").path
        let outside = root.appending("outside").path
        for path in ["\(home)/data", "\(home)/kept", "\(state)/cache", outside] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        try FileManager.default.createSymbolicLink(atPath: "\(home)/escape", withDestinationPath: outside)
        let wiper = DataWiper(home: home, stateDirectories: [state])
        let outcome = wiper.wipe(["~/data", "\(state)/cache", "~/missing", "~", outside, "~/../outside", "~/escape",
                                  "~root/x", "relative"])
        #expect(outcome.removed == ["~/data", "\(state)/cache", "~/missing"])
        #expect(outcome.refused.map(\.path) == ["~", outside, "~/../outside", "~/escape", "~root/x", "relative"])
        #expect(!FileManager.default.fileExists(atPath: "\(home)/data"))
        #expect(!FileManager.default.fileExists(atPath: "\(state)/cache"))
        #expect(FileManager.default.fileExists(atPath: "\(home)/kept"))
        #expect(FileManager.default.fileExists(atPath: outside))
        #expect(!outcome.succeeded)
    }

    @Test func aSymbolicallyLinkedDataDirectoryIsEmptiedNotJustUnlinked() throws {
        let root = try TemporaryDirectory()
        let home = root.appending("home").path
        let real = "\(home)/.var/notes-data"
        try FileManager.default.createDirectory(atPath: "\(real)/nested/deeper", withIntermediateDirectories: true)
        for file in ["\(real)/secret.txt", "\(real)/nested/deeper/secret.db"] {
            #expect(FileManager.default.createFile(atPath: file, contents: Data("org data".utf8)))
        }
        try FileManager.default.createSymbolicLink(atPath: "\(home)/data", withDestinationPath: real)
        let outcome = DataWiper(home: home, stateDirectories: []).wipe(["~/data"])
        #expect(outcome.removed == ["~/data"] && outcome.succeeded)
        // The data is gone; the directory and the link stay, so the app finds its folder empty.
        #expect(try FileManager.default.contentsOfDirectory(atPath: real) == [])
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: "\(home)/data") == real)
    }

    @Test func aLinkInsideTheTreeIsRemovedAsALinkAndItsTargetKept() throws {
        let root = try TemporaryDirectory()
        let home = root.appending("home").path
        let outside = root.appending("outside").path
        try FileManager.default.createDirectory(atPath: "\(home)/data/sub", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: "\(outside)/precious.txt", contents: Data("keep".utf8)))
        #expect(FileManager.default.createFile(atPath: "\(home)/data/sub/file.txt", contents: Data("org".utf8)))
        try FileManager.default.createSymbolicLink(atPath: "\(home)/data/sub/to-outside", withDestinationPath: outside)
        try FileManager.default.createSymbolicLink(atPath: "\(home)/data/to-file",
                                                   withDestinationPath: "\(outside)/precious.txt")
        let outcome = DataWiper(home: home, stateDirectories: []).wipe(["~/data"])
        #expect(outcome.removed == ["~/data"] && outcome.succeeded)
        #expect(!FileManager.default.fileExists(atPath: "\(home)/data"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside) == ["precious.txt"])
        #expect(FileManager.default.contents(atPath: "\(outside)/precious.txt") == Data("keep".utf8))
    }

    @Test func aDeclaredFileIsRemovedAsAFile() throws {
        let root = try TemporaryDirectory()
        let home = root.appending("home").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: "\(home)/notes.sqlite", contents: Data("org".utf8)))
        let outcome = DataWiper(home: home, stateDirectories: []).wipe(["~/notes.sqlite"])
        #expect(outcome.removed == ["~/notes.sqlite"] && outcome.succeeded)
        #expect(!FileManager.default.fileExists(atPath: "\(home)/notes.sqlite"))
    }

    /// The file system names by bytes; `String`'s `hasPrefix` by canonically equivalent Characters.
    @Test func aPathInAnotherUnicodeFormOfTheHomeIsOutsideIt() throws {
        let root = try TemporaryDirectory()
        let home = root.appending("caf\u{E9}").path, other = root.appending("cafe\u{301}").path
        for directory in [home, other] {
            try FileManager.default.createDirectory(atPath: "\(directory)/data", withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: "\(directory)/data/file", contents: Data(directory.utf8)))
        }
        let outcome = DataWiper(home: home, stateDirectories: []).wipe(["\(other)/data"])
        #expect(outcome.refused.map(\.path) == ["\(other)/data"] && outcome.removed == [])
        #expect(FileManager.default.fileExists(atPath: "\(home)/data/file") && FileManager.default.fileExists(atPath: "\(other)/data/file"))
    }

    /// "/" followed by a combining mark is one Character, but two components to the kernel: the
    /// walk goes one component at a time, never through a "/" inside a name.
    @Test func aComponentStartingWithACombiningMarkIsItsOwnComponent() throws {
        let root = try TemporaryDirectory()
        let home = try #require(DataWiper.resolved(root.path))
        try FileManager.default.createDirectory(atPath: "\(home)/a/\u{301}b", withIntermediateDirectories: true)
        let wiper = DataWiper(home: home, stateDirectories: [])
        #expect(wiper.check("~/a/\u{301}b", roots: [home]) == .remove(.init(root: home, components: ["a", "\u{301}b"], keepDirectory: false)))
        #expect(DataWiper.lexicallyNormalised("/x/a/\u{301}b/../c") == "/x/a/c")
    }

    @Test func withoutAHomeTildeIsRefused() {
        let outcome = DataWiper(home: nil, stateDirectories: []).wipe(["~/data"])
        #expect(outcome.refused.map(\.reason) == ["no home directory to expand ~ against"])
    }
}

@Suite struct ReconnectBackoffTests {
    @Test func doublesUpToTheCapAndResets() {
        var backoff = ReconnectBackoff()
        let delays = (0..<9).map { _ in backoff.next() }
        #expect(delays == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .milliseconds(1600),
                           .milliseconds(3200), .seconds(5), .seconds(5), .seconds(5)])
        backoff.reset()
        #expect(backoff.next() == .milliseconds(100))
    }
}
