import Testing
import TestSupport
import Glibc
import JSONCore
@testable import ProctorPolicy

private typealias Support = PolicyTestSupport

extension TemporaryDirectory {
    /// A fresh directory holding `files` (name: text).
    convenience init(files: [String: String]) throws {
        try self.init()
        for (name, text) in files { try write(name, text) }
    }
}

private func load(_ path: String) -> Result<LoadedPolicy, PolicyProblems> {
    Result { () throws(PolicyProblems) in try PolicyDirectory.load(path) }
}

@Suite struct MergeRuleTests {
    @Test func defaultsMergeSettingBySettingLaterFileWins() throws {
        let first = try Support.fragment("""
        {"schema": 1, "version": "1", "defaults": {
          "dlp": {"clipboard": {"level": "blocked", "charLimit": 10}, "print": "block",
                  "share": {"exempt": ["com.a.*", "com.b.*"]}},
          "compliance": {"onViolation": "wipe", "offlineGraceSeconds": 60}}}
        """, source: "00.json")
        let second = try Support.fragment("""
        {"schema": 1, "defaults": {
          "dlp": {"clipboard": {"charLimit": 20}, "share": {"exempt": ["com.c.*"], "send": "none"}},
          "compliance": {"offlineGraceSeconds": 0}}}
        """, source: "10.json")
        let policy = try Policy.merge([first, second])
        #expect(policy.defaults.dlp == DLPSettings(clipboardLevel: .blocked, clipboardCharLimit: 20, shareSend: ShareLevel.none,
                                                   shareExempt: ["com.c.*"], print: .block))
        #expect(policy.defaults.compliance == ComplianceSettings(onViolation: .wipe, offlineGraceSeconds: 0))
        // The other order: the other file's settings win.
        let reversed = try Policy.merge([second, first])
        #expect(reversed.defaults.dlp.clipboardCharLimit == 10)
        #expect(reversed.defaults.dlp.shareExempt == ["com.a.*", "com.b.*"])
        #expect(reversed.defaults.dlp.shareSend == ShareLevel.none)
        #expect(reversed.defaults.compliance.offlineGraceSeconds == 60)
    }

    @Test func aLaterAppEntryReplacesTheWholeEntry() throws {
        let first = try Support.fragment("""
        {"schema": 1, "version": "1", "apps": {
          "com.example.notes": {"match": {"executable": "/usr/bin/notes"}, "config": {"a": 1},
                                "dlp": {"print": "block"}},
          "com.example.mail": {"state": "blocked"}}}
        """)
        let second = try Support.fragment("""
        {"schema": 1, "apps": {"com.example.notes": {"state": "retired"}, "com.example.chat": {}}}
        """)
        let policy = try Policy.merge([first, second])
        #expect(policy.apps["com.example.notes"] == AppPolicy(state: .retired))
        #expect(policy.apps["com.example.mail"] == AppPolicy(state: .blocked))
        #expect(policy.apps["com.example.chat"] == AppPolicy())
        #expect(policy.apps.count == 3)
    }

    @Test func versionIsTheLastOneSaid() throws {
        let one = try Support.fragment(#"{"schema": 1, "version": "one"}"#)
        let two = try Support.fragment(#"{"schema": 1, "version": "two"}"#)
        let none = try Support.fragment(#"{"schema": 1}"#)
        #expect(try Policy.merge([one, two, none]).version == "two")
        #expect(try Policy.merge([two, none, one]).version == "one")
    }

    @Test func noVersionAnywhereIsAProblem() throws {
        let a = try Support.fragment(#"{"schema": 1}"#, source: "00-a.json")
        let b = try Support.fragment(#"{"schema": 1}"#, source: "10-b.json")
        do {
            _ = try Policy.merge([a, b])
            Issue.record("a policy without a version was merged")
        } catch {
            #expect(error.problems.map(\.description) == [
                #"10-b.json: version: missing "version": no file of the policy names one (read: 00-a.json, 10-b.json); put "version" in one of them, such as "2026-11-29.1""#,
            ])
        }
        #expect(throws: PolicyProblems.self) { try Policy.merge([]) }
    }

    @Test func overlayingAppliesTheSameRuleToAWholePolicy() throws {
        let base = Policy(version: "dir", defaults: AppSettings(dlp: DLPSettings(clipboardLevel: .managed, print: .block)),
                          apps: ["com.example.a": AppPolicy(state: .blocked), "com.example.b": AppPolicy()])
        let bundle = Policy(version: "bundle", defaults: AppSettings(dlp: DLPSettings(print: .allow)),
                            apps: ["com.example.a": AppPolicy(config: ["k": "v"])])
        let effective = base.overlaying(bundle)
        #expect(effective.version == "bundle")
        #expect(effective.defaults.dlp == DLPSettings(clipboardLevel: .managed, print: .allow))
        #expect(effective.apps == ["com.example.a": AppPolicy(config: ["k": "v"]), "com.example.b": AppPolicy()])
    }
}

@Suite struct MergeDirectoryTests {
    @Test func readsJSONFilesInByteOrderAndIgnoresTheRest() throws {
        let directory = try TemporaryDirectory(files: [
            "10-b.json": #"{"schema": 1, "version": "from-b", "defaults": {"dlp": {"print": "block"}}}"#,
            "02-a.json": #"{"schema": 1, "version": "from-a", "defaults": {"dlp": {"print": "allow", "screenCapture": "block"}}}"#,
            "Z-upper.json": #"{"schema": 1, "defaults": {"dlp": {"notifications": "block"}}}"#,
            "a-lower.json": #"{"schema": 1, "defaults": {"dlp": {"notifications": "allow"}}}"#,
            ".hidden.json": "not even JSON",
            ".\u{301}hidden.json": "hidden too: '.' then a combining mark is one Character, but starts with the byte '.'",
            "b\u{600}.json": #"{"schema": 1}"#,  // U+0600 joins the "." after it into one Character: still *.json
            "notes.txt": "not JSON either",
            "10-b.json~": "an editor's backup",
        ])
        defer { directory.remove() }
        let loaded = try load(directory.path).get()
        // Byte order: digits, then upper case, then lower case.
        #expect(loaded.sources == ["02-a.json", "10-b.json", "Z-upper.json", "a-lower.json", "b\u{600}.json"])
        #expect(loaded.policy.version == "from-b")
        #expect(loaded.policy.defaults.dlp == DLPSettings(print: .block, screenCapture: .block, notifications: .allow))
    }

    /// Drop-ins are parsed side by side (`PolicyDirectory.load`) when they are large enough
    /// to pay for it, on the calling thread when not; either way they merge in the order of
    /// their names: each file's entry of the app all of them name replaces the one before,
    /// and every file's own apps are kept.
    @Test(arguments: [false, true]) func manyDropInsMergeInNameOrder(sideBySide: Bool) throws {
        // Strings are at most PolicyLimits.maxStringBytes: pad with a list of them.
        let chunk = "\"" + String(repeating: "x", count: 1000) + "\""
        let padding = Array(repeating: chunk, count: sideBySide ? PolicyDirectory.concurrentParseMinimumBytes / 12 / 1000 + 1 : 0)
            .joined(separator: ",")
        var files: [String: String] = [:]
        for file in 0..<12 {
            let print = file % 2 == 0 ? "allow" : "block"
            files["\(file + 10)-apps.json"] = """
                {"schema": 1, "version": "v\(file)", "apps": {
                  "com.example.shared": {"config": {"file": \(file)}, "dlp": {"print": "\(print)"}},
                  "com.example.only\(file)": {"state": "blocked", "config": {"padding": [\(padding)]}}}}
                """
        }
        #expect((files.values.reduce(0) { $0 + $1.utf8.count } >= PolicyDirectory.concurrentParseMinimumBytes) == sideBySide)
        let directory = try TemporaryDirectory(files: files)
        defer { directory.remove() }
        let loaded = try load(directory.path).get()
        #expect(loaded.sources == (10..<22).map { "\($0)-apps.json" })
        #expect(loaded.policy.version == "v11")
        #expect(loaded.policy.apps["com.example.shared"] == AppPolicy(config: ["file": 11], settings: AppSettings(dlp: DLPSettings(print: .block))))
        #expect(loaded.policy.apps.count == 13)
        #expect((0..<12).allSatisfy { loaded.policy.apps["com.example.only\($0)"]?.state == .blocked })
    }

    @Test func problemsOfEveryFileNameTheirFile() throws {
        let directory = try TemporaryDirectory(files: [
            "00-defaults.json": "{\"schema\": 1, \"version\": \"1\"}",
            "10-apps.json": "{\n  \"schema\": 1,\n  \"apps\": { \"notes\": {} }\n}",
            "20-broken.json": "{\"schema\": 1,",
        ])
        defer { directory.remove() }
        guard case .failure(let failure) = load(directory.path) else { Issue.record("a broken directory loaded"); return }
        #expect(failure.problems.map(\.source) == ["10-apps.json", "20-broken.json"])
        #expect(failure.problems.first?.location == SourceLocation(line: 3, column: 13))
        #expect(failure.problems.last?.message == "invalid JSON: unexpected end of input: expected a key or '}'")
    }

    @Test func aLinkToSomethingElseIsNotAPolicyFileAndNothingOfItIsQuoted() throws {
        let directory = try TemporaryDirectory(files: [
            "00-defaults.json": "{\"schema\": 1, \"version\": \"1\"}",
            "secret": "  s3cr3t-token",
        ])
        defer { directory.remove() }
        #expect(symlink("/usr/bin/sh", directory.path + "/50-binary.json") == 0)
        #expect(symlink(directory.path + "/secret", directory.path + "/60-secret.json") == 0)
        guard case .failure(let failure) = load(directory.path) else { Issue.record("links to other files loaded"); return }
        #expect(failure.problems.map(\.description) == [
            "50-binary.json:1:1: (document): not a policy file: a policy is a JSON object, which starts with {",
            "60-secret.json:1:1: (document): not a policy file: a policy is a JSON object, which starts with {",
        ])
    }

    @Test func missingEmptyOrUnreadableDirectory() throws {
        let empty = try TemporaryDirectory(files: ["README": "policy goes here"])
        defer { empty.remove() }
        guard case .failure(let noFiles) = load(empty.path) else { Issue.record("an empty directory loaded"); return }
        #expect(noFiles.problems.map(\.message) == ["policy directory \(empty.path) holds no *.json policy file"])
        guard case .failure(let missing) = load(empty.path + "/nope") else { Issue.record("a missing directory loaded"); return }
        #expect(missing.problems.map(\.message) == ["policy directory \(empty.path)/nope does not exist"])
        guard case .failure(let notDirectory) = load(empty.path + "/README") else { Issue.record("a file loaded as a directory"); return }
        #expect(notDirectory.problems.first?.message.hasPrefix("policy directory \(empty.path)/README cannot be read: ") == true)
    }

    @Test func aFileLargerThanTheLimitIsRefusedWhileReading() throws {
        let directory = try TemporaryDirectory(files: ["big.json": String(repeating: " ", count: 100) + "{}"])
        defer { directory.remove() }
        do {
            _ = try PolicyFile.read(directory.path + "/big.json", source: "big.json", limit: 64)
            Issue.record("a file past the limit was read")
        } catch {
            #expect(error.problems.first?.message == "\(directory.path)/big.json is 102 bytes, more than the 64 bytes left of "
                + "the 16777216 bytes (16 MiB) a policy directory may hold in all (PolicyLimits.maxDocumentBytes)")
        }
        #expect(try PolicyFile.read(directory.path + "/big.json", source: nil, limit: 102).count == 102)
        // An endless file is cut off at the limit rather than read forever.
        #expect(throws: PolicyProblems.self) { try PolicyFile.read("/dev/zero", source: nil, limit: 1024) }
    }
}

@Suite struct MergeShippedConfigTests {
    @Test func theShippedDefaultPolicyIsValid() throws {
        let loaded = try load(Support.repositoryRoot + "/config/policy.d").get()
        #expect(loaded.sources == ["00-defaults.json"])
        #expect(loaded.policy.defaults.dlp.clipboardLevel == .managed)
        #expect(loaded.policy.apps.isEmpty)
    }

    @Test func theExamplesAreValidAndMergeAsDocumented() throws {
        let loaded = try load(Support.repositoryRoot + "/config/examples").get()
        #expect(loaded.sources == ["00-defaults.json", "10-notes.json", "20-mail.json"])
        #expect(loaded.policy.version == "2026-11-29.2")
        // 20-mail.json says one default; the rest come from 00-defaults.json.
        #expect(loaded.policy.defaults.dlp.screenCapture == .block)
        #expect(loaded.policy.defaults.dlp.clipboardLevel == .managed)
        let demo = try #require(loaded.policy.apps["io.proctor.demo.notes"])
        #expect(demo.match == MatchRule(executable: "/usr/local/bin/proctor-demo", users: ["*"]))
        #expect(demo.state == .authorized)
        let states = Set(loaded.policy.apps.values.map(\.state))
        #expect(states == [.authorized, .blocked, .retired])
        // Every rule kind appears somewhere in the example.
        let dlps = loaded.policy.apps.values.map(\.settings.dlp)
        #expect(Set(dlps.compactMap(\.clipboardLevel)) == Set(ClipboardLevel.allCases))
        #expect(Set(dlps.compactMap(\.shareSend)) == Set(ShareLevel.allCases))
        #expect(Set(dlps.compactMap(\.notifications)) == Set(NotificationLevel.allCases))
        #expect(Set(loaded.policy.apps.values.compactMap(\.settings.compliance.onViolation)) == Set(Violation.allCases))
        #expect(dlps.contains { $0.fileExportAllow != nil && $0.fileExportDeny != nil })
        #expect(dlps.contains { $0.shareExempt != nil && $0.clipboardCharLimit ?? 0 > 0 })
    }
}
