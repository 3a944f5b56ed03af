import Glibc
import JSONCore
@testable import ProctorPolicy
import Testing

/// `PolicyFastReader` must accept only what the validating `PolicyReader` accepts and build
/// the same fragment; everything else it hands back (nil) for `PolicyReader` to explain.
@Suite struct FastReaderTests {
    /// The fragment `PolicyReader` reads from `bytes`, or nil when it finds problems.
    private func validated(_ bytes: [UInt8]) -> PolicyFragment? {
        guard let root = try? JSONParser.parse(bytes, maxDepth: PolicyLimits.maxNestingDepth) else { return nil }
        return try? PolicyFragment.read(root, source: "test.json")
    }

    private func contents(of path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while case let count = fread(&chunk, 1, chunk.count, file), count > 0 { bytes += chunk[..<count] }
        return bytes
    }

    private func expectAgreement(_ bytes: [UInt8], _ comment: Comment? = nil) {
        guard let fast = PolicyFastReader.read(bytes, source: "test.json") else { return }
        #expect(validated(bytes) == fast, comment)
    }

    private static let sample = """
        {
          "schema": 1, "version": "2026-11-29.1",
          "defaults": { "dlp": { "clipboard": { "level": "managed", "charLimit": 0 }, "notifications": "block-org-data" },
                        "compliance": { "onViolation": "block" } },
          "apps": {
            "com.example.notes": {
              "state": "authorized",
              "match": { "executable": "/usr/bin/example-notes", "users": ["*", "alice"] },
              "config": { "serverURL": "https://notes.example.com", "syncDays": 14, "nested": { "a": [1, 2.5, null, true] } },
              "dlp": { "share": { "send": "managed", "receive": "any", "exempt": ["com.example.*"] }, "print": "block",
                       "screenCapture": "allow", "fileExport": { "allow": ["/home/*/Documents/**"], "deny": ["/tmp/**"], "enforcement": "kernel" } },
              "compliance": { "minVersion": "2.3.0-rc.1", "onViolation": "warn", "offlineGraceSeconds": 86400,
                              "offlineWipeSeconds": 172800 }
            },
            "com.example.old": { "state": "retired" },
            "com.example.mail": { "dlp": { "clipboard": { "level": "managed-paste-in", "charLimit": 1e3 } } }
          }
        }
        """

    @Test func readsValidDocumentsExactlyAsTheValidatingReader() throws {
        let sample = Array(Self.sample.utf8)
        let fast = try #require(PolicyFastReader.read(sample, source: "test.json"))
        #expect(fast == validated(sample))
        #expect(fast.apps.count == 3 && fast.apps["com.example.mail"]?.settings.dlp.clipboardCharLimit == 1000)
        // Every key the schema has is read here, not handed back to `PolicyReader`.
        let notes = try #require(fast.apps["com.example.notes"]?.settings)
        #expect(notes.dlp.fileExportEnforcement == .kernel && notes.compliance.offlineWipeSeconds == 172_800)
        for name in ["00-defaults.json", "10-notes.json", "20-mail.json"] {
            let bytes = try #require(contents(of: PolicyTestSupport.repositoryRoot + "/config/examples/" + name), "\(name)")
            let fromExample = try #require(PolicyFastReader.read(bytes, source: "test.json"), "\(name)")
            #expect(fromExample == validated(bytes), "\(name)")
        }
    }

    @Test func givesUpOnEverythingTheValidatingReaderRefuses() {
        let refused = [
            #"{"schema": 1, "schema": 1}"#,
            #"{"schema": 2}"#,
            #"{"version": "1"}"#,
            #"{"schema": 1, "apps": {"com.a.b": {}, "com.a.b": {}}}"#,
            #"{"schema": 1, "apps": {"com.a.b": {"state": "authorized", "state": "blocked"}}}"#,
            #"{"schema": 1, "apps": {"com.a.b": {"dlp": {"share": {"send": "any", "send": "none"}}}}}"#,
            #"{"schema": 1, "apps": {"com.a.b": {"config": {"k": 1, "k": 2}}}}"#,
            #"{"schema": 1, "apps": {"com.a.b": {"config": []}}}"#,
            #"{"schema": 1, "apps": {"nodots": {}}}"#,
            #"{"schema": 1, "apps": {"com.a.b": {"stat": "authorized"}}}"#,
            #"{"schema": 1, "apps": {"com.a.b": {"state": "gone"}}}"#,
            #"{"schema": 1, "apps": {"com.a.b": {"match": {"executable": "bin/x"}}}}"#,
            #"{"schema": 1, "apps": {"com.a.b": {"match": {"users": ["1root"]}}}}"#,
            #"{"schema": 1, "apps": {"com.a.b": {"dlp": {"fileExport": {"deny": ["/a/../b"]}}}}}"#,
            #"{"schema": 1, "apps": {"com.a.b": {"dlp": {"clipboard": {"charLimit": -1}}}}}"#,
            #"{"schema": 1, "apps": {"com.a.b": {"dlp": {"clipboard": {"charLimit": 1.5}}}}}"#,
            #"{"schema": 1, "apps": {"com.a.b": {"compliance": {"minVersion": "two"}}}}"#,
            #"{"schema": 1, "version": ""}"#,
            "{\"schema\": 1, \"version\": \"a\\u0007\"}",
            #"{"schema": 1, "version": "1",}"#,
            #"{"schema": 1} {}"#,
            "\u{FEFF}{\"schema\": 1}",
            #"{"schema": 1, "defaults": {"dlp": {"share": {"exempt": [1]}}}}"#,
            #"{"schema": 1, "defaults": {"dlp": {"share": {"exempt": ["com.*",]}}}}"#,
            #"{"schema": 1, "defaults": {"dlp": {"fileExport": {"enforcement": "strict"}}}}"#,
            #"{"schema": 1, "defaults": {"dlp": {"fileExport": {"enforcement": "kernel", "enforcement": "kernel"}}}}"#,
            #"{"schema": 1, "defaults": {"compliance": {"offlineWipeSeconds": 0}}}"#,
            #"{"schema": 1, "defaults": {"compliance": {"offlineWipeSeconds": 2.5}}}"#,
            #"{"schema": 1, "defaults": {"compliance": {"offlineWipeSeconds": 60, "offlineGraceSeconds": 60}}}"#,
            #"{"schema": 1, "defaults": {"compliance": {"offlineGraceSeconds": 90, "offlineWipeSeconds": 60}}}"#,
        ]
        for text in refused {
            #expect(PolicyFastReader.read(Array(text.utf8), source: nil) == nil, "\(text)")
            #expect(validated(Array(text.utf8)) == nil, "\(text)")
        }
        let longList = #"{"schema": 1, "defaults": {"dlp": {"share": {"exempt": ["#
            + Array(repeating: #""com.a.b""#, count: PolicyLimits.maxListCount + 1).joined(separator: ",") + "]}}}}"
        #expect(PolicyFastReader.read(Array(longList.utf8), source: nil) == nil)
        let deep = #"{"schema": 1, "apps": {"com.a.b": {"config": "# + String(repeating: "[", count: 40)
            + String(repeating: "]", count: 40) + "}}}"
        #expect(PolicyFastReader.read(Array(deep.utf8), source: nil) == nil)
    }

    @Test func agreesWithTheValidatingReaderOnEveryTruncationAndMutation() {
        let sample = Array(Self.sample.utf8)
        for length in 0..<sample.count { expectAgreement(Array(sample[..<length]), "truncated at \(length)") }
        var state: UInt64 = 0xFA57
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        let tokens = ["{", "}", "[", "]", ",", ":", "\"", "1", "-0", "1e2", "null", "\"x\"", "\"k\": 1,", "\u{FF}"].map { Array($0.utf8) }
        for _ in 0..<3000 {
            var bytes = sample
            switch next(3) {
            case 0: bytes[next(bytes.count)] = UInt8(next(256))
            case 1: bytes.remove(at: next(bytes.count))
            default: bytes.insert(contentsOf: tokens[next(tokens.count)], at: next(bytes.count))
            }
            expectAgreement(bytes, "\(String(decoding: bytes, as: UTF8.self))")
        }
    }
}
