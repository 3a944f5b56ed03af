import Foundation
import JSONCore
@testable import ProctorCTL
import Testing

/// The pieces of the readable output, and the reference in docs/cli.md.
@Suite struct FormattingTests {
    @Test(arguments: [
        ("2026-11-29T12:00:00Z", 1_795_953_600),
        ("2026-11-29T12:00:00.123456Z", 1_795_953_600),
        ("2026-11-29T13:30:00+01:30", 1_795_953_600),
        ("2026-11-29T07:00:00-05:00", 1_795_953_600),
        ("1970-01-01T00:00:00z", 0),
        ("2024-02-29T23:59:60Z", 1_709_251_200),
    ])
    func rfc3339TimesAreRead(_ text: String, _ seconds: Int) {
        #expect(LocalTime.parse(text) == seconds)
    }

    @Test(arguments: ["", "2026-11-29", "2026-11-29T12:00:00", "2026-13-01T00:00:00Z", "2026-11-29T12:00:00+0100",
                      "2026-11-29T12:00:00Zjunk", "yesterday"])
    func anythingElseIsLeftAsItIs(_ text: String) {
        #expect(LocalTime.parse(text) == nil)
        #expect(LocalTime.format(text) == text)
    }

    @Test func durationsShowTheTwoLargestUnits() {
        #expect(LocalTime.duration(42.9) == "42s")
        #expect(LocalTime.duration(303) == "5m 3s")
        #expect(LocalTime.duration(7384.5) == "2h 3m")
        #expect(LocalTime.duration(3 * 86_400 + 4 * 3600 + 59) == "3d 4h")
        #expect(LocalTime.duration(-1) == "0s")
    }

    @Test func tablesAlignColumnsWithoutTrailingBlanks() {
        var table = TextTable("A", "LONGER", "C")
        table.rows = [["wide cell", "x", ""], ["y", "z", "last"]]
        #expect(table.lines == ["A          LONGER  C", "wide cell  x", "y          z       last"])
    }

    @Test func prettyJSONParsesBackToTheSameValue() throws {
        let value: JSONValue = ["b": [1, ["c": nil, "a": "x\"y"], []], "a": [:], "ä": true]
        let text = PrettyJSON.format(value)
        #expect(try JSONParser.parse(text) == value)
        #expect(text == """
            {
              "a": {},
              "b": [
                1,
                {
                  "a": "x\\"y",
                  "c": null
                },
                []
              ],
              "ä": true
            }
            """)
    }

    @Test func theReferenceDocumentsEveryCommand() throws {
        let reference = try String(contentsOf: repositoryRoot.appendingPathComponent("docs/cli.md"), encoding: .utf8)
        for verb in ProctorCTL.verbs {
            #expect(reference.contains("`\(verb.commandLine)"), "docs/cli.md lacks \(verb.commandLine)")
        }
        for status in ExitStatus.allCases { #expect(reference.contains("| \(status.rawValue) |")) }
    }
}
