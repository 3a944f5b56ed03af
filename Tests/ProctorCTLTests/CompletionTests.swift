@testable import ProctorCTL
import ProctorPolicy
import Testing

/// `proctorctl __complete`, which the bash, zsh and fish scripts in completions/ call: what
/// the built binary offers for the word at an index of a command line.
@Suite struct CompletionTests {
    /// The candidates (without descriptions) for the last of `words`, as the binary prints them.
    func complete(_ words: [String], environment: [String: String] = ["PROCTOR_ADMIN_SOCKET": "/nonexistent/admin"],
                  sourceLocation: Testing.SourceLocation = #_sourceLocation) throws -> [String] {
        let result = try proctorctl([Completion.command, "\(words.count - 1)"] + words, environment: environment)
        #expect(result.status == 0, sourceLocation: sourceLocation)
        #expect(result.error == "", sourceLocation: sourceLocation)
        return result.outputLines.map { String($0.prefix { $0 != "\t" }) }
    }

    @Test func commandsComeFromTheCommandTable() throws {
        let firstWords = ProctorCTL.verbs.map(\.words[0]).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        #expect(try complete([""]) == ["words"] + firstWords + ["help"])
        #expect(try complete(["po"]) == ["words", "policy"])
        #expect(try complete(["policy", ""]) == ["words"] + ProctorCTL.verbs.filter { $0.words[0] == "policy" }.map(\.words[1]))
        #expect(try complete(["help", "policy", "v"]) == ["words", "validate"])
        #expect(try complete(["--json", "st"]) == ["words", "status"])
    }

    @Test func commandsCarryTheirSummaryForZshAndFish() throws {
        let result = try proctorctl([Completion.command, "0", "stat"])
        #expect(result.output == "words\nstatus\t\(ProctorCTL.verbs[0].summary)\n")
    }

    @Test func optionsAreTheCommandsOrTheGlobalOnes() throws {
        #expect(try complete(["-"]) == ["words"] + GlobalOptions.documented.map(\.name))
        let check = try #require(ProctorCTL.verbs.first { $0.words == ["check"] })
        #expect(try complete(["check", "a.b", "print", "--"]) == ["words"] + check.options.map(\.name) + ["--help"])
        #expect(try complete(["policy", "validate", "--f"]) == ["words", "--fragment"])
    }

    @Test func valuesFollowThePlaceholder() throws {
        #expect(try complete(["check", "a.b", ""]) == ["words"] + Action.allCases.map(\.rawValue))
        #expect(try complete(["check", "--size", "3", "a.b", "sc"]) == ["words", "screen-capture"])
        #expect(try complete(["check", "a.b", "file.export", "/h"]) == ["files"])
        #expect(try complete(["policy", "apply", ""]) == ["files"])
        #expect(try complete(["--address", ""]) == ["files"])
        #expect(try complete(["events", "--kind", "l"]) == ["words", "lifecycle"])
        #expect(try complete(["events", "--kind=de"]) == ["words", "--kind=decision", "--kind=denial"])
        #expect(try complete(["events", "-o", "j"]) == ["words", "json"])
        #expect(try complete(["check", "--size", ""]) == ["words"])
        #expect(try complete(["status", "extra", ""]) == ["words"])
    }

    @Test func appIDsComeFromProctordAtTheAddressTheLineNames() throws {
        let server = try FakeAdminServer(replies: ["ListApps": { _ in AdminFixtures.apps }])
        defer { server.stop() }
        let ids = ["io.proctor.demo.notes", "com.example.legacy", "com.example.mail"]
        #expect(try complete(["app", ""], environment: ["PROCTOR_ADMIN_SOCKET": server.path]) == ["words"] + ids)
        #expect(try complete(["--address", server.path, "wipe", "com."]) == ["words"] + ids.dropFirst())
        #expect(try complete(["check", "--address=\(server.path)", "io.proctor.demo.notes", "clipboard.copy", "com.example.m"])
            == ["words", "com.example.mail"])
    }

    @Test func withoutProctordThereAreSilentlyNoAppIDs() throws {
        #expect(try complete(["app", ""]) == ["words"])
        #expect(try complete(["check", "a.b", "share.send", ""]) == ["words"])
    }

    @Test func everyPlaceholderOfTheTableIsKnown() {
        for verb in ProctorCTL.verbs {
            let names = verb.options.compactMap(\.valueName)
                + verb.argumentsSynopsis.split(separator: " ").map { $0.filter { $0 != "[" && $0 != "]" } }
            for name in names {
                #expect(Completion.placeholders[name] != nil, "\(verb.commandLine): no completion for \(name)")
            }
        }
    }

    @Test func aBadIndexIsAUsageError() throws {
        let result = try proctorctl([Completion.command, "5", "status"])
        #expect(result.status == 2)
        #expect(result.output == "")
    }
}
