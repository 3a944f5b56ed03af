import Testing
import JSONCore
@testable import ProctorPolicy

private typealias Support = PolicyTestSupport

/// The single problem of `text`, recorded as a test issue when there are none or several.
private func onlyProblem(_ text: String, source: String? = "test.json") throws -> PolicyProblem {
    let problems = Support.problems(text, source: source)
    #expect(problems.count == 1, "\(problems)")
    return try #require(problems.first)
}

/// A schema-1 document holding one app `com.example.notes` with the given entry body.
private func app(_ body: String) -> String {
    "{\n  \"schema\": 1,\n  \"apps\": {\n    \"com.example.notes\": \(body)\n  }\n}"
}

@Suite struct ParserAcceptsTests {
    @Test func readsEveryKeyIntoTheModel() throws {
        let fragment = try Support.fragment("""
        {
          "schema": 1,
          "version": "2026-11-29.1",
          "defaults": { "dlp": { "clipboard": { "level": "managed", "charLimit": 0 } },
                        "compliance": { "offlineGraceSeconds": 86400 } },
          "apps": {
            "com.example.notes": {
              "state": "authorized",
              "match": { "executable": "/usr/bin/example-notes", "users": ["*", "alice"] },
              "config": { "serverURL": "https://notes.example.com", "syncDays": 14 },
              "dlp": {
                "clipboard": { "level": "managed-paste-in", "charLimit": 40 },
                "share": { "send": "managed", "receive": "any", "exempt": ["com.example.*", "*"] },
                "print": "block",
                "screenCapture": "allow",
                "fileExport": { "allow": ["/home/*/Documents/Work/**"], "deny": ["/tmp/**", "/"], "enforcement": "kernel" },
                "notifications": "block-org-data"
              },
              "compliance": { "minVersion": "2.3.0-rc.1", "onViolation": "wipe", "offlineGraceSeconds": 0 }
            },
            "com.example.old": { "state": "retired" }
          }
        }
        """, source: "10-notes.json")
        #expect(fragment.source == "10-notes.json")
        #expect(fragment.version == "2026-11-29.1")
        #expect(fragment.defaults == AppSettings(dlp: DLPSettings(clipboardLevel: .managed, clipboardCharLimit: 0),
                                                 compliance: ComplianceSettings(offlineGraceSeconds: 86400)))
        let notes = try #require(fragment.apps["com.example.notes"])
        #expect(notes.state == .authorized)
        #expect(notes.match == MatchRule(executable: "/usr/bin/example-notes", users: ["*", "alice"]))
        #expect(notes.config == ["serverURL": "https://notes.example.com", "syncDays": 14])
        #expect(notes.settings.dlp == DLPSettings(
            clipboardLevel: .managedPasteIn, clipboardCharLimit: 40, shareSend: .managed, shareReceive: .any,
            shareExempt: ["com.example.*", "*"], print: .block, screenCapture: .allow,
            fileExportAllow: ["/home/*/Documents/Work/**"], fileExportDeny: ["/tmp/**", "/"], fileExportEnforcement: .kernel,
            notifications: .blockOrgData))
        #expect(notes.settings.compliance == ComplianceSettings(
            minVersion: SemanticVersion(major: 2, minor: 3, patch: 0, preRelease: ["rc", "1"]), onViolation: .wipe,
            offlineGraceSeconds: 0))
        #expect(fragment.apps["com.example.old"] == AppPolicy(state: .retired))
    }

    @Test func aDropInMayLeaveOutVersionButACompletePolicyMayNot() throws {
        let dropIn = "{\"schema\": 1, \"apps\": {\"com.example.a\": {}}}"
        #expect(try Support.fragment(dropIn).version == nil)
        #expect(try Support.fragment(dropIn).apps["com.example.a"] == AppPolicy())
        do {
            _ = try Policy.parse(Array(dropIn.utf8), source: "bundle")
            Issue.record("a policy without a version was accepted")
        } catch {
            #expect(error.problems.map(\.description) == [
                "bundle:1:1: version: missing \"version\": a complete policy names its version, such as \"2026-11-29.1\"",
            ])
        }
    }

    @Test func stateDefaultsToAuthorized() throws {
        #expect(try Support.fragment(app("{}")).apps["com.example.notes"]?.state == .authorized)
    }
}

/// One test per kind of problem, each asserting the path, the place and the message.
@Suite struct ParserProblemTests {
    @Test func invalidEnumValueReadsLikeACompilerDiagnostic() throws {
        let problem = try onlyProblem("""
        {
          "schema": 1,
          "version": "1",
          "apps": {
            "com.example.notes": {
              "dlp": { "clipboard": {
                "level": "managed-in" } }
            }
          }
        }
        """, source: "10-apps.json")
        #expect(problem.path == Support.appPath("com.example.notes", "dlp", "clipboard", "level"))
        #expect(problem.location == SourceLocation(line: 7, column: 9))
        #expect(problem.description == #"10-apps.json:7:9: apps["com.example.notes"].dlp.clipboard.level: found "managed-in", expected one of "blocked", "managed", "managed-paste-in", "any""#)
        #expect(problem.json == [
            "source": "10-apps.json", "path": #"apps["com.example.notes"].dlp.clipboard.level"#, "line": 7, "column": 9,
            "message": #"found "managed-in", expected one of "blocked", "managed", "managed-paste-in", "any""#,
        ])
    }

    @Test func everyEnumeratedSettingNamesItsValues() throws {
        let cases: [(String, String)] = [
            (#"{"state": "on"}"#, #"found "on", expected one of "authorized", "blocked", "retired""#),
            (#"{"dlp": {"share": {"send": "all"}}}"#, #"found "all", expected one of "none", "managed", "any""#),
            (#"{"dlp": {"print": "deny"}}"#, #"found "deny", expected one of "allow", "block""#),
            (#"{"dlp": {"notifications": "silent"}}"#, #"found "silent", expected one of "allow", "block-org-data", "block""#),
            (#"{"compliance": {"onViolation": "kill"}}"#, #"found "kill", expected one of "block", "warn", "wipe""#),
            (#"{"dlp": {"fileExport": {"enforcement": "landlock"}}}"#, #"found "landlock", expected one of "advisory", "kernel""#),
            (#"{"dlp": {"fileExport": {"enforcement": true}}}"#, #"found true, expected one of "advisory", "kernel""#),
        ]
        for (body, message) in cases {
            #expect(try onlyProblem(app(body)).message == message)
        }
    }

    @Test func malformedJSONIsOneProblemWithItsPlace() throws {
        let problem = try onlyProblem("{\n  \"schema\": 1,\n  \"apps\": {\n    \"com.example.notes\": { \"state\": \"blocked\", }\n  }\n}")
        #expect(problem.path == Support.appPath("com.example.notes"))
        #expect(problem.location == SourceLocation(line: 4, column: 48))
        #expect(problem.message == "invalid JSON: unexpected '}': expected a key in double quotes")
    }

    @Test func duplicateKey() throws {
        let problem = try onlyProblem("{\n  \"schema\": 1,\n  \"schema\": 1\n}")
        #expect(problem.path == JSONPath.root.appending("schema"))
        #expect(problem.location == SourceLocation(line: 3, column: 3))
        #expect(problem.message == "invalid JSON: duplicate key \"schema\": an object may say each key once")
    }

    @Test func nestingTooDeep() throws {
        let config = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        let problem = try onlyProblem(app("{\"config\": {\"deep\": \(config)}}"))
        #expect(problem.message == "invalid JSON: nesting deeper than \(PolicyLimits.maxNestingDepth) levels")
        #expect(problem.location?.line == 4)
    }

    @Test func unknownKeyWithASuggestion() throws {
        let problem = try onlyProblem(app("{\n      \"dlp\": { \"clipbaord\": { \"level\": \"any\" } }\n    }"))
        #expect(problem.path == Support.appPath("com.example.notes", "dlp", "clipbaord"))
        #expect(problem.location == SourceLocation(line: 5, column: 16))
        #expect(problem.message == #"unknown key "clipbaord", did you mean "clipboard"?"#)
    }

    @Test func unknownKeyWithoutASuggestionListsTheKeys() throws {
        let problem = try onlyProblem("{\"schema\": 1, \"policies\": {}}")
        #expect(problem.path == JSONPath.root.appending("policies"))
        #expect(problem.location == SourceLocation(line: 1, column: 15))
        #expect(problem.message == #"unknown key "policies", expected one of "schema", "version", "defaults", "apps""#)
        #expect(try onlyProblem(app(#"{"dlp": {"charlimit": 1}}"#)).message
            == #"unknown key "charlimit", expected one of "clipboard", "share", "print", "screenCapture", "fileExport", "notifications""#)
        #expect(try onlyProblem(app(#"{"dlp": {"clipboard": {"charlimit": 1}}}"#)).message
            == #"unknown key "charlimit", did you mean "charLimit"?"#)
    }

    @Test func wrongType() throws {
        let problem = try onlyProblem(app("{ \"dlp\": [] }"))
        #expect(problem.path == Support.appPath("com.example.notes", "dlp"))
        #expect(problem.location == SourceLocation(line: 4, column: 28))
        #expect(problem.message == "found an array, expected an object")
        #expect(try onlyProblem(app(#"{"match": {"users": "alice"}}"#)).message
            == #"found "alice", expected a list of strings, each a user name (letters, digits, "_", ".", "-"; not starting with a digit, "." or "-") or "*" for any user"#)
        #expect(try onlyProblem(app(#"{"dlp": {"print": true}}"#)).message == #"found true, expected one of "allow", "block""#)
        #expect(try onlyProblem(#"{"schema": 1, "apps": null}"#).message == "found null, expected an object")
        #expect(try onlyProblem(#"[1]"#).message == "found an array, expected an object")
    }

    @Test func schemaMissingUnsupportedOrMistyped() throws {
        let missing = try onlyProblem("{\"apps\": {}}")
        #expect(missing.path == .root)
        #expect(missing.location == SourceLocation(line: 1, column: 1))
        #expect(missing.message == "missing \"schema\": every policy file starts with \"schema\": 1")
        // Another schema's keys are not judged by schema 1's rules: one problem only.
        let unsupported = try onlyProblem("{\n  \"schema\": 2,\n  \"rules\": []\n}")
        #expect(unsupported.path == JSONPath.root.appending("schema"))
        #expect(unsupported.location == SourceLocation(line: 2, column: 3))
        #expect(unsupported.message == "schema 2 is not supported by this proctord; it understands schema 1")
        #expect(try onlyProblem("{\"schema\": \"1\"}").message == #"found "1", expected the number 1"#)
        #expect(try onlyProblem("{\"schema\": 1.5}").message == "found 1.5, expected the number 1")
    }

    @Test func invalidVersion() throws {
        let empty = try onlyProblem("{\"schema\": 1, \"version\": \"\"}")
        #expect(empty.path == JSONPath.root.appending("version"))
        #expect(empty.location == SourceLocation(line: 1, column: 15))
        #expect(empty.message == #"found "", expected a non-empty version string without control characters"#)
        #expect(try onlyProblem("{\"schema\": 1, \"version\": 3}").message == #"found 3, expected a version string such as "2026-11-29.1""#)
        let long = String(repeating: "v", count: PolicyLimits.maxVersionBytes + 1)
        #expect(try onlyProblem("{\"schema\": 1, \"version\": \"\(long)\"}").message
            == "found a string of \(PolicyLimits.maxVersionBytes + 1) bytes, expected at most \(PolicyLimits.maxVersionBytes)")
    }

    @Test(arguments: ["notes", "com..example", ".com.example", "com.example.", "com.exa_mple", "com.example notes", "*.example"])
    func invalidAppID(_ id: String) throws {
        let problem = try onlyProblem("{\"schema\": 1, \"apps\": {\"\(id)\": {}}}")
        #expect(problem.path == Support.appPath(id))
        #expect(problem.location == SourceLocation(line: 1, column: 24))
        #expect(problem.message == "found the app id \"\(id)\", expected a reverse-DNS id such as \"com.example.notes\" "
            + "(letters, digits and \"-\" in two or more dot-separated parts, at most 253 bytes)")
    }

    @Test func appIDTooLong() throws {
        let id = "com." + String(repeating: "a", count: 250)
        #expect(try onlyProblem("{\"schema\": 1, \"apps\": {\"\(id)\": {}}}").message.hasPrefix("found the app id \"com.aaaa"))
        let longest = "com." + String(repeating: "a", count: 249)
        #expect(Support.problems("{\"schema\": 1, \"apps\": {\"\(longest)\": {}}}").isEmpty)
    }

    @Test func invalidExemptGlob() throws {
        let problem = try onlyProblem(app(#"{"dlp": {"share": {"exempt": ["com.example.*", "com/example"]}}}"#))
        #expect(problem.path == Support.appPath("com.example.notes", "dlp", "share", "exempt").appending(index: 1))
        #expect(problem.location == SourceLocation(line: 4, column: 73))
        #expect(problem.message == #"found "com/example", expected an app id or an app-id glob with "*" such as "com.example.*""#)
        #expect(try onlyProblem(app(#"{"dlp": {"share": {"exempt": [""]}}}"#)).path
            == Support.appPath("com.example.notes", "dlp", "share", "exempt").appending(index: 0))
    }

    @Test(arguments: ["Documents/**", "~/Documents", "/home/../etc/**", "/home/./x", "/home//x", "/home/x/", "/home/a**/x", "/a/***", ""])
    func invalidFileExportGlob(_ glob: String) throws {
        let problem = try onlyProblem(app("{\"dlp\": {\"fileExport\": {\"deny\": [\"/tmp/**\", \"\(glob)\"]}}}"))
        #expect(problem.path == Support.appPath("com.example.notes", "dlp", "fileExport", "deny").appending(index: 1))
        #expect(problem.location == SourceLocation(line: 4, column: 70))
        #expect(problem.message == "found \"\(glob)\", expected an absolute path glob such as \"/home/*/Documents/**\" "
            + "(relative paths are refused; no \".\", \"..\" or empty components; \"**\" only as a whole component)")
    }

    @Test(arguments: ["root user", "1000", "-alice", ".alice", "al:ice", ""])
    func invalidUserName(_ user: String) throws {
        let problem = try onlyProblem(app("{\"match\": {\"users\": [\"\(user)\"]}}"))
        #expect(problem.path == Support.appPath("com.example.notes", "match", "users").appending(index: 0))
        #expect(problem.location == SourceLocation(line: 4, column: 47))
        #expect(problem.message.hasPrefix("found \"\(user)\", expected a user name"))
    }

    @Test(arguments: ["usr/bin/notes", "/usr/bin/../bin/notes", "/usr/bin/", "notes", ""])
    func executableNotAbsoluteAndNormalised(_ path: String) throws {
        let problem = try onlyProblem(app("{\"match\": {\"executable\": \"\(path)\"}}"))
        #expect(problem.path == Support.appPath("com.example.notes", "match", "executable"))
        #expect(problem.location == SourceLocation(line: 4, column: 37))
        #expect(problem.message == "found \"\(path)\", expected an absolute, normalised path such as \"/usr/bin/example-notes\" "
            + "(no \".\", \"..\", empty components or trailing \"/\")")
    }

    @Test(arguments: ["-1", "1.5", "\"10\"", "1e300"])
    func numbersMustBeNonNegativeIntegers(_ number: String) throws {
        let charLimit = try onlyProblem(app("{\"dlp\": {\"clipboard\": {\"charLimit\": \(number)}}}"))
        #expect(charLimit.path == Support.appPath("com.example.notes", "dlp", "clipboard", "charLimit"))
        #expect(charLimit.location == SourceLocation(line: 4, column: 49))
        #expect(charLimit.message.hasSuffix(", expected a non-negative integer"))
        let grace = try onlyProblem(app("{\"compliance\": {\"offlineGraceSeconds\": \(number)}}"))
        #expect(grace.path == Support.appPath("com.example.notes", "compliance", "offlineGraceSeconds"))
        #expect(grace.location == SourceLocation(line: 4, column: 42))
    }

    @Test(arguments: ["0", "-1", "1.5", "\"10\""])
    func offlineWipeSecondsMustBePositive(_ number: String) throws {
        let problem = try onlyProblem(app("{\"compliance\": {\"offlineWipeSeconds\": \(number)}}"))
        #expect(problem.path == Support.appPath("com.example.notes", "compliance", "offlineWipeSeconds"))
        #expect(problem.message.hasSuffix(", expected a positive integer (seconds)"))
    }

    @Test func offlineWipeSecondsMustOutlastTheGraceBesideIt() throws {
        let problem = try onlyProblem(app("{\"compliance\": {\"offlineGraceSeconds\": 3600, \"offlineWipeSeconds\": 3600}}"))
        #expect(problem.path == Support.appPath("com.example.notes", "compliance", "offlineWipeSeconds"))
        #expect(problem.message == "found 3600, expected more than offlineGraceSeconds (3600): the data is wiped after the app "
            + "may no longer run offline")
        let fragment = try Support.fragment(app(#"{"compliance": {"offlineGraceSeconds": 60, "offlineWipeSeconds": 600}}"#))
        #expect(fragment.apps["com.example.notes"]?.settings.compliance
            == ComplianceSettings(offlineGraceSeconds: 60, offlineWipeSeconds: 600))
    }

    @Test func negativeNumberMessage() throws {
        #expect(try onlyProblem(app("{\"dlp\": {\"clipboard\": {\"charLimit\": -1}}}")).message == "found -1, expected a non-negative integer")
    }

    @Test(arguments: ["2", "v2.3.0", "2.3.0.1", "02.3.0", "2.3.0-", "latest"])
    func invalidMinVersion(_ version: String) throws {
        let problem = try onlyProblem(app("{\"compliance\": {\"minVersion\": \"\(version)\"}}"))
        #expect(problem.path == Support.appPath("com.example.notes", "compliance", "minVersion"))
        #expect(problem.location == SourceLocation(line: 4, column: 42))
        #expect(problem.message == "found \"\(version)\", expected a semantic version such as \"2.3.0\" or \"1.0.0-rc.1\"")
    }

    @Test func reportsEveryProblemAtOnceInDocumentOrder() throws {
        let problems = Support.problems("""
        {
          "schema": 1,
          "defaults": { "dlp": { "print": "never" } },
          "apps": {
            "com.example.b": { "state": "gone" },
            "com.example.a": { "dlp": { "clipboard": { "level": "x", "charLimit": -2 } }, "extra": 1 },
            "bad_id": {}
          }
        }
        """, source: "20-x.json")
        #expect(problems.map(\.description) == [
            #"20-x.json:3:26: defaults.dlp.print: found "never", expected one of "allow", "block""#,
            #"20-x.json:5:24: apps["com.example.b"].state: found "gone", expected one of "authorized", "blocked", "retired""#,
            #"20-x.json:6:48: apps["com.example.a"].dlp.clipboard.level: found "x", expected one of "blocked", "managed", "managed-paste-in", "any""#,
            #"20-x.json:6:62: apps["com.example.a"].dlp.clipboard.charLimit: found -2, expected a non-negative integer"#,
            #"20-x.json:6:83: apps["com.example.a"].extra: unknown key "extra", expected one of "state", "match", "config", "dlp", "compliance""#,
            #"20-x.json:7:5: apps.bad_id: found the app id "bad_id", expected a reverse-DNS id such as "com.example.notes" (letters, digits and "-" in two or more dot-separated parts, at most 253 bytes)"#,
        ])
        let json = PolicyProblems(problems).json
        #expect(json.arrayValue?.count == 6)
        #expect(json.arrayValue?.first?["line"] == 3)
    }

    @Test func aProblemWithoutSourceOrPlace() {
        let problem = PolicyProblem(path: JSONPath.root.appending("version"), message: "m")
        #expect(problem.description == "<policy>: version: m")
        #expect(problem.json == ["source": nil, "path": "version", "line": nil, "column": nil, "message": "m"])
    }
}

@Suite struct ParserLimitTests {
    @Test func documentTooLarge() throws {
        let bytes = [UInt8](repeating: 0x20, count: PolicyLimits.maxDocumentBytes + 1)
        do {
            _ = try PolicyFragment.parse(bytes, source: "huge.json")
            Issue.record("a document past the limit was accepted")
        } catch {
            #expect(error.problems.map(\.description) == [
                "huge.json:1:1: (document): found a document of 16777217 bytes, expected at most 16777216 bytes (16 MiB), PolicyLimits.maxDocumentBytes",
            ])
        }
    }

    @Test func tooManyApps() throws {
        var text = "{\"schema\": 1, \"apps\": {"
        text += (0...PolicyLimits.maxApps).map { "\"com.example.a\($0)\": {}" }.joined(separator: ",")
        text += "}}"
        let problem = try onlyProblem(text)
        #expect(problem.path == JSONPath.root.appending("apps"))
        #expect(problem.location == SourceLocation(line: 1, column: 15))
        #expect(problem.message == "found 100001 apps, expected at most 100000 (PolicyLimits.maxApps)")
    }

    @Test func listTooLong() throws {
        let users = Array(repeating: "\"*\"", count: PolicyLimits.maxListCount + 1).joined(separator: ",")
        let problem = try onlyProblem(app("{\"match\": {\"users\": [\(users)]}}"))
        #expect(problem.path == Support.appPath("com.example.notes", "match", "users"))
        #expect(problem.location == SourceLocation(line: 4, column: 37))
        #expect(problem.message == "found a list of 1025 entries, expected at most 1024 (PolicyLimits.maxListCount)")
    }

    @Test func stringTooLong() throws {
        let path = "/" + String(repeating: "a", count: PolicyLimits.maxStringBytes)
        let problem = try onlyProblem(app("{\"match\": {\"executable\": \"\(path)\"}}"))
        #expect(problem.path == Support.appPath("com.example.notes", "match", "executable"))
        #expect(problem.location == SourceLocation(line: 4, column: 37))
        #expect(problem.message == "found a string of 4097 bytes, expected at most 4096")
    }

    @Test func configTooLarge() throws {
        let big = String(repeating: "x", count: PolicyLimits.maxConfigBytes)
        let problem = try onlyProblem(app("{\"config\": {\"blob\": \"\(big)\"}}"))
        #expect(problem.path == Support.appPath("com.example.notes", "config"))
        #expect(problem.location == SourceLocation(line: 4, column: 27))
        #expect(problem.message == "found a config of 262155 bytes, expected at most 262144 (PolicyLimits.maxConfigBytes)")
    }

    @Test func longFoundValuesAreShortened() throws {
        let long = String(repeating: "z", count: 200)
        let message = try onlyProblem(app("{\"state\": \"\(long)\"}")).message
        #expect(message.hasPrefix("found \"" + String(repeating: "z", count: 80) + "\"… (200 bytes), expected one of"))
    }
}

@Suite struct SpellingSuggestionTests {
    @Test func suggestsCloseWordsOnly() {
        let keys = ["clipboard", "share", "print", "screenCapture", "fileExport", "notifications"]
        #expect(SpellingSuggestion.closest(to: "clipbaord", in: keys) == "clipboard")
        #expect(SpellingSuggestion.closest(to: "screencapture", in: keys) == "screenCapture")
        #expect(SpellingSuggestion.closest(to: "prnt", in: keys) == "print")
        #expect(SpellingSuggestion.closest(to: "notification", in: keys) == "notifications")
        #expect(SpellingSuggestion.closest(to: "exports", in: keys) == nil)
        #expect(SpellingSuggestion.closest(to: "", in: keys) == nil)
    }
}

@Suite struct ParserSyntaxRuleTests {
    @Test func pathRules() {
        for valid in ["/", "/usr/bin/notes", "/opt/a b/c", "/x/...", "/x/.hidden", "/x/a.b"] {
            #expect(PolicySyntax.isNormalisedAbsolutePath(valid), "\(valid)")
            #expect(PolicySyntax.isPathGlob(valid), "\(valid)")
        }
        for invalid in ["", "x", "//", "/x/", "/x//y", "/x/./y", "/x/..", "/x\u{0}y"] {
            #expect(!PolicySyntax.isNormalisedAbsolutePath(invalid), "\(invalid)")
            #expect(!PolicySyntax.isPathGlob(invalid), "\(invalid)")
        }
        for glob in ["/**", "/home/*/Documents/**", "/a/**/b", "/a/*.pdf", "/a/*x*"] { #expect(PolicySyntax.isPathGlob(glob), "\(glob)") }
        for glob in ["/a**", "/a/**b", "/a/***", "/a/*.**"] { #expect(!PolicySyntax.isPathGlob(glob), "\(glob)") }
    }

    @Test func idAndUserRules() {
        #expect(PolicySyntax.isAppID("a.b") && PolicySyntax.isAppID("io.proctor.demo.notes") && PolicySyntax.isAppID("0-x.y-1"))
        #expect(!PolicySyntax.isAppID("a") && !PolicySyntax.isAppID("a.b.") && !PolicySyntax.isAppID("a.*"))
        #expect(PolicySyntax.isAppIDGlob("*") && PolicySyntax.isAppIDGlob("com.*.notes") && !PolicySyntax.isAppIDGlob("com.ex ample"))
        #expect(PolicySyntax.isUserName("*") && PolicySyntax.isUserName("_apt") && PolicySyntax.isUserName("host$"))
        #expect(!PolicySyntax.isUserName("$") && !PolicySyntax.isUserName("a*"))
    }
}
