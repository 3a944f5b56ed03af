import Foundation
import ProctorFleet
import TestSupport
import Testing

@Suite struct FleetConfigurationTests {
    func parse(_ text: String) throws(ConfigurationFileError) -> FleetConfiguration {
        try FleetConfiguration.parse(Array(text.utf8), file: "/etc/proctor/proctord.conf")
    }

    func error(_ text: String) -> ConfigurationFileError? {
        do { _ = try parse(text); return nil } catch { return error }
    }

    @Test func aCompleteFileSetsEverything() throws {
        let configuration = try parse("""
            # Pull from the MDM.
            [Source]
            BundleURL = https://mdm.example.com/proctor/bundle.json
            PollIntervalSec=600
            CACertificate=/etc/proctor/mdm-ca.pem
            ClientCertificate=/etc/proctor/client.pem
            ClientKey=/etc/proctor/client.key
            UnixSocket=/run/proctor/mdm
            StatusURL=https://mdm.example.com/proctor/status
            StatusIntervalSec=900

            ; and trust only what it signs
            [Policy]
            RequireSignedBundles=yes

            """)
        var expected = FleetConfiguration()
        expected.source.bundleURL = "https://mdm.example.com/proctor/bundle.json"
        expected.source.pollIntervalSeconds = 600
        expected.source.caCertificate = "/etc/proctor/mdm-ca.pem"
        expected.source.clientCertificate = "/etc/proctor/client.pem"
        expected.source.clientKey = "/etc/proctor/client.key"
        expected.source.unixSocket = "/run/proctor/mdm"
        expected.source.statusURL = "https://mdm.example.com/proctor/status"
        expected.source.statusIntervalSeconds = 900
        expected.requireSignedBundles = true
        #expect(configuration == expected)
    }

    @Test func defaultsAndAMissingFileAreTodaysBehaviour() throws {
        let defaults = try parse("[Source]\nBundleURL=https://mdm/b\n")
        #expect(defaults.source.pollIntervalSeconds == 300)
        #expect(!defaults.requireSignedBundles)
        let directory = try TemporaryDirectory()
        #expect(try FleetConfiguration.load(directory.path + "/proctord.conf") == FleetConfiguration())
        #expect(try parse("") == FleetConfiguration())
        for (text, value) in [("yes", true), ("no", false), ("true", true), ("off", false), ("1", true), ("0", false)] {
            #expect(try parse("[Policy]\nRequireSignedBundles=\(text)").requireSignedBundles == value)
        }
    }

    @Test(arguments: [
        ("[Source]\nBundleURL=http://mdm/b", 2, "BundleURL", "expected an https:// URL (or file:///PATH), found \"http://mdm/b\""),
        ("[Source]\nBundleURL=", 2, "BundleURL", "expected an https:// URL (or file:///PATH), found \"\""),
        ("[Source]\nStatusURL=http://mdm:s3cret@mdm/s?t=1", 2, "StatusURL",
         "expected an https:// URL (or file:///PATH), found \"http://<redacted>@mdm/s?<redacted>\""),
        ("[Source]\nStatusURL=https://mdm/a b", 2, "StatusURL",
         "expected a URL of at most 2048 bytes without spaces or control characters"),
        ("[Source]\nPollIntervalSec=5min", 2, "PollIntervalSec",
         "expected a whole number of seconds from 1 to 604800, found \"5min\""),
        ("[Source]\nStatusIntervalSec=0", 2, "StatusIntervalSec",
         "expected a whole number of seconds from 1 to 604800, found \"0\""),
        ("[Source]\nCACertificate=ca.pem", 2, "CACertificate", "expected an absolute file path, found \"ca.pem\""),
        ("[Policy]\nRequireSignedBundles=maybe", 2, "RequireSignedBundles", "expected yes or no, found \"maybe\""),
        ("\n[Source]\nBundleUrl=https://mdm/b", 3, "BundleUrl",
         "unknown key in [Source]; known keys: BundleURL=, PollIntervalSec=, CACertificate=, ClientCertificate=, ClientKey=, "
            + "UnixSocket=, StatusURL=, StatusIntervalSec="),
        ("[Source]\nUnixSocket=run/proctor/mdm", 2, "UnixSocket", "expected an absolute file path, found \"run/proctor/mdm\""),
        ("[Policy]\nBundleURL=https://mdm/b", 2, "BundleURL", "unknown key in [Policy]; known keys: RequireSignedBundles="),
        ("BundleURL=https://mdm/b", 1, "BundleURL", "outside a section: put it under [Source] or [Policy]"),
        ("[Source]\nPollIntervalSec=60\nPollIntervalSec=90", 3, "PollIntervalSec", "already set on line 2"),
        ("[Source]\nClientCertificate=/c.pem", 2, "ClientKey", "must be set when ClientCertificate is (mutual TLS needs both)"),
        ("[Source]\nClientKey=/c.key", 2, "ClientCertificate", "must be set when ClientKey is (mutual TLS needs both)"),
    ] as [(String, Int, String, String)])
    func aWrongValueNamesFileLineKeyAndWhatWasExpected(text: String, line: Int, key: String, message: String) {
        #expect(error(text) == ConfigurationFileError(file: "/etc/proctor/proctord.conf", line: line, key: key, message: message))
    }

    @Test(arguments: [
        ("[Fleet]", 1, "unknown section [Fleet], expected [Source] or [Policy]"),
        ("[Source", 1, "expected a section header such as [Source]"),
        ("[Source]\nBundleURL", 2, "expected KEY=VALUE, a [Section] header or a # comment"),
    ] as [(String, Int, String)])
    func aWrongLineNamesFileAndLine(text: String, line: Int, message: String) {
        #expect(error(text) == ConfigurationFileError(file: "/etc/proctor/proctord.conf", line: line, message: message))
    }

    @Test(arguments: [
        ("https://mdm.example.com/proctor/bundle.json", "https://mdm.example.com/proctor/bundle.json"),
        ("https://user:pass@mdm.example.com:8443/b", "https://<redacted>@mdm.example.com:8443/b"),
        ("https://a@b@mdm.example.com?x=1", "https://<redacted>@mdm.example.com?<redacted>"),
        ("https://mdm.example.com/s?X-Amz-Signature=abc#f", "https://mdm.example.com/s?<redacted>"),
        ("https://mdm.example.com/p@q", "https://mdm.example.com/p@q"),
        // A password written with its `#` or `?` unescaped: libcurl reads no user information
        // there (its host would end at that character), but the password must not show.
        ("https://user:pass#word@mdm.example.com/b", "https://<redacted>@mdm.example.com/b"),
        ("https://user:pa?ss@mdm.example.com/b", "https://<redacted>@mdm.example.com/b"),
        ("https://mdm.example.com?token=a/b", "https://mdm.example.com?<redacted>"),
        ("file:///srv/bundle.json", "file:///srv/bundle.json"),
        ("not a url", "not a url"),
    ])
    func aURLIsShownWithoutItsUserInformationAndQuery(_ url: String, _ shown: String) {
        #expect(FleetConfiguration.redacted(url) == shown)
    }

    @Test func theMessageReadsLikeACompilerDiagnostic() {
        #expect(error("[Source]\nPollIntervalSec=x")?.description
            == "/etc/proctor/proctord.conf:2: PollIntervalSec=: expected a whole number of seconds from 1 to 604800, found \"x\"")
    }

    @Test func filesThatAreNotTextOrTooLargeOrUnreadableAreRefused() throws {
        do { _ = try FleetConfiguration.parse([0x5b, 0xff, 0x5d], file: "f"); Issue.record("not UTF-8 was accepted") }
        catch { #expect(error == ConfigurationFileError(file: "f", message: "not UTF-8 text")) }
        let directory = try TemporaryDirectory()
        let big = directory.path + "/big.conf"
        try Data(repeating: UInt8(ascii: "#"), count: FleetConfiguration.maximumFileBytes + 1).write(to: URL(fileURLWithPath: big))
        #expect(throws: ConfigurationFileError(file: big, message: "larger than 65536 bytes")) {
            try FleetConfiguration.load(big)
        }
        #expect(throws: ConfigurationFileError(file: directory.path, message: "cannot read: Is a directory (EISDIR)")) {
            try FleetConfiguration.load(directory.path)
        }
    }
}
