import Glibc
import JSONCore
@testable import ProctorPolicy
import Testing

/// A large policy file's `apps` read on two threads (`AppsSplit`) must give exactly what one
/// reader gives — the same fragment, or the same hand-back (nil) to the validating reader —
/// wherever the guessed boundary falls.
@Suite struct SplitReadTests {
    /// A policy of `count` apps in its canonical form (no white space), large enough to split
    /// from about 14 000 apps; every app differs, some carry settings and config.
    private static func document(apps count: Int) -> [UInt8] {
        var apps: [AppID: AppPolicy] = [:]
        for index in 0..<count {
            var app = AppPolicy(state: index % 50 == 49 ? .blocked : .authorized)
            if index % 7 == 0 {
                app.settings.dlp = DLPSettings(clipboardLevel: .managed, clipboardCharLimit: index % 100,
                                               shareExempt: ["com.partner.*"], fileExportDeny: ["/tmp/**"])
                app.config = ["server": .string("https://example.com/\(index)"), "nested": .object(["n": .number(Double(index))])]
            }
            apps["com.split.app\(index)"] = app
        }
        return Policy(version: "split-\(count)", defaults: AppSettings(), apps: apps).canonicalBytes
    }

    private static let large = document(apps: 16_000)

    /// The offsets between two members of the root's `apps`, as one reader reaches them.
    private static func memberBoundaries(_ bytes: [UInt8]) throws -> Set<Int> {
        var json = JSONPullReader(bytes)
        var boundaries: Set<Int> = []
        try json.beginObject()
        while let key = try json.nextKey() {
            guard key == "apps" else {
                _ = try json.value()
                continue
            }
            try json.beginObject()
            while try json.nextKey() != nil {
                _ = try json.value()
                boundaries.insert(json.offset)
            }
        }
        return boundaries
    }

    private func expectSameAsOneReader(_ bytes: [UInt8], _ comment: Comment? = nil) {
        let split = PolicyFastReader.read(bytes, source: "test.json", splitting: true)
        let whole = PolicyFastReader.read(bytes, source: "test.json", splitting: false)
        #expect(split != nil && split == whole, comment)
    }

    @Test func guessesABoundaryBetweenTwoAppsOfACanonicalDocument() throws {
        let bytes = Self.large
        let boundary = try #require(AppsSplit.guessBoundary(in: bytes))
        #expect(boundary >= bytes.count / 2 && boundary < bytes.count / 2 + AppsSplit.searchBytes)
        #expect(try Self.memberBoundaries(bytes).contains(boundary))
        // The second half, read from there, is every app after it.
        let split = try #require(AppsSplit.start(bytes))
        // `join` takes over a half no thread has begun (then it returns nil): wait for one.
        while !split.hasBegun { sched_yield() }
        let rest = try #require(split.join())
        let whole = try #require(PolicyFastReader.read(bytes, source: nil))
        #expect(rest.apps.count > 0 && rest.apps.count < whole.apps.count)
        #expect(rest.apps.allSatisfy { whole.apps[$0.key] == $0.value })
    }

    @Test func readsTheSameFragmentAsOneReader() throws {
        let split = try #require(PolicyFastReader.read(Self.large, source: "test.json", splitting: true))
        #expect(split.apps.count == 16_000)
        expectSameAsOneReader(Self.large)
        // Documents too small to split, and one with white space between the members.
        expectSameAsOneReader(Self.document(apps: 100))
        let spaced = Array(String(decoding: Self.large, as: UTF8.self).replacing("},\"com.", with: "} ,\n  \"com.").utf8)
        #expect(AppsSplit.guessBoundary(in: spaced) != nil)
        expectSameAsOneReader(spaced)
    }

    /// A document whose middle is 10 bytes into `trap` (the value of an app), with 16 002 apps.
    private static func trapped(_ trap: String) -> (bytes: [UInt8], trapRange: Range<Int>) {
        func plain(_ prefix: String, _ count: Int) -> String {
            (0..<count).map { #""com.trap.\#(prefix)\#($0)":{"state":"authorized"}"# }.joined(separator: ",")
        }
        let trapApp = #""com.trap.middle":"# + trap
        let tail = "," + plain("b", 8100) + "}}"
        func head(padding: Int) -> String {
            #"{"schema":1,"version":"t","apps":{"com.trap.pad":{"config":{"p":""# + String(repeating: "x", count: padding)
                + #""}},"# + plain("a", 7900) + ","
        }
        let padding = trapApp.utf8.count + tail.utf8.count - 20 - head(padding: 0).utf8.count
        precondition(padding >= 0)
        let text = head(padding: padding) + trapApp + tail
        let start = head(padding: padding).utf8.count
        return (Array(text.utf8), start..<(start + trapApp.utf8.count))
    }

    @Test func aBoundaryGuessedInsideAnAppIsNotUsed() throws {
        let traps = [
            // A nested object in `config` followed by a key that looks like an app id: the
            // guess, read from there, even reads as apps until the config closes.
            #"{"config":{"x":{"y":1},"com.fake.app":{"state":"blocked"}},"state":"authorized"}"#,
            // Strings holding `},"` and escapes, then a nested object.
            #"{"config":{"s":"},\"com.fake.app\":{","t":"}, \"com.q.r\" : {","u":{"v":"\\"},"com.fake.b":{}}}"#,
            // Settings objects between the app's own keys.
            #"{"dlp":{"clipboard":{"level":"managed"},"print":"block"},"compliance":{"onViolation":"warn"}}"#,
        ]
        for trap in traps {
            let (bytes, trapRange) = Self.trapped(trap)
            let boundary = try #require(AppsSplit.guessBoundary(in: bytes), "\(trap)")
            let fragment = try #require(PolicyFastReader.read(bytes, source: nil, splitting: true), "\(trap)")
            #expect(fragment.apps.count == 16_002, "\(trap)")
            expectSameAsOneReader(bytes, "\(trap)")
            if trapRange.contains(boundary) { #expect(try !Self.memberBoundaries(bytes).contains(boundary)) }
        }
        // The first trap is the one the guess falls into.
        let (bytes, trapRange) = Self.trapped(traps[0])
        #expect(trapRange.contains(try #require(AppsSplit.guessBoundary(in: bytes))))
    }

    @Test func givesUpWhereOneReaderGivesUp() {
        let text = String(decoding: Self.large, as: UTF8.self)
        let lastApp = "\"com.split.app9998\":"
        let refused = [
            // An app of the first half named again in the second.
            text.replacing(lastApp, with: "\"com.split.app1\":"),
            // A problem in the second half, in the first, and after `apps`.
            text.replacing(lastApp + "{\"state\":\"authorized\"}", with: lastApp + "{\"state\":\"gone\"}"),
            text.replacing("\"com.split.app1\":{\"state\":\"authorized\"}", with: "\"com.split.app1\":{\"stat\":1}"),
            String(text.dropLast()) + ",\"schema\":1}",
        ]
        for document in refused {
            let bytes = Array(document.utf8)
            #expect(bytes.count != Self.large.count || bytes != Self.large)
            #expect(PolicyFastReader.read(bytes, source: nil, splitting: true) == nil, "\(refused.firstIndex(of: document)!)")
            #expect(PolicyFastReader.read(bytes, source: nil, splitting: false) == nil, "\(refused.firstIndex(of: document)!)")
        }
    }

    @Test func countsTheAppsOfBothHalvesAgainstTheLimit() {
        let apps = (0...PolicyLimits.maxApps).map { #""com.many.a\#($0)":{}"# }.joined(separator: ",")
        let over = Array((#"{"schema":1,"apps":{"# + apps + "}}").utf8)
        #expect(AppsSplit.guessBoundary(in: over) != nil)
        #expect(PolicyFastReader.read(over, source: nil, splitting: true) == nil)
        let atLimit = Array((#"{"schema":1,"apps":{"# + apps.dropFirst(#""com.many.a0":{},"#.count) + "}}").utf8)
        #expect(PolicyFastReader.read(atLimit, source: nil, splitting: true)?.apps.count == PolicyLimits.maxApps)
    }
}
