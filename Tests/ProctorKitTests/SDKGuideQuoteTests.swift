import Foundation
import Testing

/// docs/sdk.md quotes Examples/NotesApp, which `make test` builds and tests. A quoted block
/// follows a marker `<!-- quoted from PATH -->`; each of its lines must be a line of PATH, in
/// the same order (a line `…` or `// …` stands for lines left out), so the guide cannot drift
/// from code that compiles.
@Suite struct SDKGuideQuoteTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let marker = "<!-- quoted from "

    struct Quote: CustomStringConvertible {
        let path: String
        let lines: [String]
        var description: String { path }
    }

    /// Every marked block of the guide.
    static func quotes() throws -> [Quote] {
        let guide = try String(contentsOf: root.appendingPathComponent("docs/sdk.md"), encoding: .utf8)
        var quotes: [Quote] = []
        var lines = guide.split(separator: "\n", omittingEmptySubsequences: false)[...]
        while let line = lines.popFirst() {
            guard line.hasPrefix(marker), line.hasSuffix(" -->") else { continue }
            let path = String(line.dropFirst(marker.count).dropLast(" -->".count))
            guard lines.popFirst()?.hasPrefix("```") == true else {
                Issue.record("\(path): the marker is not followed by a code block")
                continue
            }
            var block: [String] = []
            while let code = lines.popFirst(), !code.hasPrefix("```") { block.append(String(code)) }
            quotes.append(Quote(path: path, lines: block))
        }
        return quotes
    }

    @Test func theGuideQuotesTheExample() throws {
        let quotes = try Self.quotes()
        #expect(quotes.count >= 5)
        for quote in quotes {
            let file = try String(contentsOf: Self.root.appendingPathComponent(quote.path), encoding: .utf8)
            var remaining = file.split(separator: "\n", omittingEmptySubsequences: false)[...]
            for line in quote.lines where !["…", "// …"].contains(line.trimmingCharacters(in: .whitespaces)) {
                guard let found = remaining.firstIndex(where: { $0 == line }) else {
                    Issue.record("docs/sdk.md quotes \(quote.path), which has no line \"\(line)\" (in this order)")
                    break
                }
                remaining = remaining[(found + 1)...]
            }
        }
    }

    /// The `onViolation` table (the block of rows starting `| \`onViolation\` |`) of a document.
    static func onViolationTable(in document: String) throws -> [Substring] {
        let text = try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0.hasPrefix("| `onViolation` | at launch |") }) else { return [] }
        return Array(lines[start...].prefix { $0.hasPrefix("|") })
    }

    /// docs/sdk.md (what the app sees) and docs/engine.md (what proctord decides) say the
    /// same about each `onViolation`.
    @Test func sdkGuideAndEngineAgreeOnEachViolation() throws {
        let sdk = try Self.onViolationTable(in: "docs/sdk.md"), engine = try Self.onViolationTable(in: "docs/engine.md")
        #expect(sdk.count == 5)
        #expect(sdk == engine)
    }
}
