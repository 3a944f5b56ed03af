import Testing
import JSONCore
@testable import ProctorPolicy

private typealias Support = PolicyTestSupport

private let base = Support.notesPolicy

@Suite struct CanonicalFormTests {
    @Test func reorderedKeysAndWhiteSpaceHashEqual() throws {
        let reordered = """
        {"apps":{"com.example.notes":{"compliance":{"offlineGraceSeconds":86400,"onViolation":"warn","minVersion":"2.3.0"},
        "dlp":{"notifications":"block-org-data","fileExport":{"deny":["/tmp/**"],"allow":["/home/*/Documents/Work/**"]},
        "screenCapture":"allow","print":"block","share":{"exempt":["com.example.*"],"receive":"any","send":"managed"},
        "clipboard":{"charLimit":40,"level":"managed-paste-in"}},"config":{"syncDays":14,"serverURL":"https://notes.example.com"},
        "match":{"users":["*"],"executable":"/usr/bin/example-notes"},"state":"authorized"}},
        "defaults":{"dlp":{"clipboard":{"charLimit":0,"level":"managed"}}},"version":"2026-11-29.1","schema":1}
        """
        let one = try Support.policy(base)
        let two = try Support.policy(reordered)
        #expect(one.sha256 == two.sha256)
        #expect(one.canonicalBytes == two.canonicalBytes)
        #expect(one.sha256.count == 64)
        #expect(one.sha256.allSatisfy { "0123456789abcdef".contains($0) })
    }

    @Test func splittingIntoDropInsDoesNotChangeTheHash() throws {
        let whole = try Support.policy(base)
        let defaults = try Support.fragment("""
        {"schema": 1, "version": "2026-11-29.1", "defaults": {"dlp": {"clipboard": {"level": "managed"}}}}
        """)
        let limit = try Support.fragment(#"{"schema": 1, "defaults": {"dlp": {"clipboard": {"charLimit": 0}}}}"#)
        let app = try Support.fragment(base.replacingFirst(#""defaults": { "dlp": { "clipboard": { "level": "managed", "charLimit": 0 } } },"#, with: ""))
        #expect(try Policy.merge([defaults, limit, app]).sha256 == whole.sha256)
    }

    @Test(arguments: [
        (#""version": "2026-11-29.1""#, #""version": "2026-11-29.2""#),
        (#""level": "managed","#, #""level": "any","#),
        (#""charLimit": 0"#, #""charLimit": 1"#),
        (#""charLimit": 40"#, #""charLimit": 41"#),
        (#""state": "authorized","#, #""state": "blocked","#),
        (#""/usr/bin/example-notes""#, #""/usr/bin/example-note""#),
        (#""users": ["*"]"#, #""users": ["*", "alice"]"#),
        (#""syncDays": 14"#, #""syncDays": 15"#),
        (#""send": "managed""#, #""send": "any""#),
        (#""receive": "any""#, #""receive": "none""#),
        (#""exempt": ["com.example.*"]"#, #""exempt": []"#),
        (#""print": "block""#, #""print": "allow""#),
        (#""screenCapture": "allow""#, #""screenCapture": "block""#),
        (#""allow": ["/home/*/Documents/Work/**"]"#, #""allow": ["/home/*/Documents/**"]"#),
        (#""deny": ["/tmp/**"]"#, #""deny": ["/tmp/*"]"#),
        (#""notifications": "block-org-data""#, #""notifications": "block""#),
        (#""minVersion": "2.3.0""#, #""minVersion": "2.3.1""#),
        (#""onViolation": "warn""#, #""onViolation": "wipe""#),
        (#""offlineGraceSeconds": 86400"#, #""offlineGraceSeconds": 86401"#),
        (#""com.example.notes": {"#, #""com.example.notez": {"#),
        (#""print": "block","#, ""),
    ])
    func anyValueChangeChangesTheHash(_ original: String, _ changed: String) throws {
        let changedText = base.replacingFirst(original, with: changed)
        #expect(changedText != base)
        #expect(try Support.policy(changedText).sha256 != Support.policy(base).sha256)
    }

    @Test func canonicalJSONHoldsOnlyWhatWasSaidAndParsesBack() throws {
        let policy = try Support.policy(#"{"schema": 1, "version": "v", "defaults": {}, "apps": {"com.example.a": {"match": {}, "config": {}, "dlp": {"print": "block"}, "compliance": {"minVersion": "2.3"}}}}"#)
        #expect(String(decoding: policy.canonicalBytes, as: UTF8.self)
            == #"{"apps":{"com.example.a":{"compliance":{"minVersion":"2.3.0"},"dlp":{"print":"block"},"match":{},"state":"authorized"}},"schema":1,"version":"v"}"#)
        let full = try Support.policy(base)
        #expect(try Policy.parse(full.canonicalBytes, source: nil) == full)
        #expect(try Policy.parse(full.canonicalBytes, source: nil).canonicalBytes == full.canonicalBytes)
    }

    @Test func anOmittedStateIsAuthorized() throws {
        let said = try Support.policy(#"{"schema": 1, "version": "v", "apps": {"com.example.a": {"state": "authorized"}}}"#)
        let omitted = try Support.policy(#"{"schema": 1, "version": "v", "apps": {"com.example.a": {}}}"#)
        #expect(said.sha256 == omitted.sha256)
    }

    /// The hash of `base` as the canonical form built through `canonicalJSON` gave it
    /// before the form was written straight from the model: identities must not change.
    @Test func theHashOfAKnownPolicyIsStable() throws {
        #expect(try Support.policy(base).sha256 == "cd3e9e2ed3330e5590dacc1c919657dda7f9882ed50ec6f914932db7a1e0d1ba")
    }

    /// `canonicalBytes` is written straight from the model; `canonicalJSON` is the
    /// definition it must agree with, byte for byte.
    @Test(arguments: [
        base,
        #"{"schema": 1, "version": "v"}"#,
        #"{"schema": 1, "version": "v\u00e9\"q\\", "defaults": {"compliance": {"offlineGraceSeconds": 4000000000000000}}}"#,
        #"{"schema": 1, "version": "v", "defaults": {"dlp": {"share": {"exempt": []}, "fileExport": {"deny": []}}}}"#,
        #"""
        {"schema": 1, "version": "ü", "apps": {
          "com.b.x": {"state": "blocked", "match": {"users": []}},
          "com.B.x": {"match": {"executable": "/opt/\u00e9"}, "config": {"z": [1, 2.5, {"b": null, "a": true}], "Z": "\n"}},
          "com.a-b.x": {"dlp": {"screenCapture": "block", "notifications": "allow"}, "compliance": {"onViolation": "block"}},
          "com.a.x": {"state": "retired", "dlp": {"clipboard": {"charLimit": 12}, "share": {"receive": "none"}}},
          "com.0.x": {"dlp": {"fileExport": {"allow": ["/a/**"]}, "print": "allow", "share": {"send": "any", "exempt": ["org.*", "com.a-b.*"]}}}
        }}
        """#,
    ])
    func canonicalBytesAreTheSerialisedCanonicalJSON(_ text: String) throws {
        let policy = try Support.policy(text)
        #expect(policy.canonicalBytes == policy.canonicalJSON.serialized())
    }

    /// Parsed ids are ASCII, which the writer sorts with `String`'s order; a key only code
    /// can put in a policy still goes by bytes: `"e\u{301}z"` is "éz" to `String` (after
    /// "f") but starts with the byte `e` (before it).
    @Test func idsThatAreNotASCIIAreStillOrderedByTheirBytes() {
        let policy = Policy(version: "v", defaults: AppSettings(),
                            apps: ["f.x": AppPolicy(), "e\u{301}z.x": AppPolicy(), "com.a": AppPolicy()])
        #expect(policy.canonicalBytes == policy.canonicalJSON.serialized())
        let text = String(decoding: policy.canonicalBytes, as: UTF8.self)
        #expect(text.utf8.firstRange(of: "\"e\u{301}z.x\"".utf8)!.lowerBound < text.utf8.firstRange(of: "\"f.x\"".utf8)!.lowerBound)
    }

    @Test func theHashIsOfTheCanonicalBytes() throws {
        let policy = try Support.policy(#"{"schema": 1, "version": "v"}"#)
        #expect(String(decoding: policy.canonicalBytes, as: UTF8.self) == #"{"schema":1,"version":"v"}"#)
        #expect(policy.sha256 == SHA256.hexDigest(Array(#"{"schema":1,"version":"v"}"#.utf8)))
    }
}

extension String {
    /// This string with the first occurrence of `target` replaced.
    func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = firstRange(of: target) else { return self }
        return replaceSubrange_(range, with: replacement)
    }

    private func replaceSubrange_(_ range: Range<String.Index>, with replacement: String) -> String {
        var copy = self
        copy.replaceSubrange(range, with: replacement)
        return copy
    }
}

@Suite struct BundleSizeTests {
    @Test func aBundleIsBoundedInCanonicalFormWhateverItsFileSize() throws {
        #expect(Policy.bundleSizeProblem(canonicalSize: PolicyLimits.maxDocumentBytes, source: "b.json") == nil)
        let problem = try #require(Policy.bundleSizeProblem(canonicalSize: PolicyLimits.maxDocumentBytes + 1, source: "b.json"))
        #expect(problem.description == "b.json: the policy is 16777217 bytes in canonical form, more than the "
            + "16777216 bytes (16 MiB) a bundle may be (PolicyLimits.maxDocumentBytes)")
        // Why the file's size is not enough: numbers are written out in full.
        let short = try Policy.parse(Array(#"{"schema":1,"version":"1","apps":{"a.b":{"config":{"n":[1e14,1e14]}}}}"#.utf8), source: nil)
        #expect(String(decoding: short.canonicalBytes, as: UTF8.self).contains("[100000000000000,100000000000000]"))
    }

    @Test func theMessageLimitsHoldAWholeDocument() {
        #expect(PolicyLimits.maxRequestBytes > PolicyLimits.maxDocumentBytes)
        #expect(PolicyLimits.maxReplyBytes >= 2 * PolicyLimits.maxRequestBytes)
    }
}
