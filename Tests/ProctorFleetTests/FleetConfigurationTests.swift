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
            StatusMaxApps=0

            ; and trust only what it signs
            [Policy]
            RequireSignedBundles=yes

            """)
        var expected = FleetConfiguration()
        expected.source.bundleURL = "https://mdm.example.com/proctor/bundle.json"
        expected.source.pollIntervalSeconds = 600
        expected.source.caCertificate = "/etc/proctor/mdm-ca.pem"
        expected.source.clientCertificate = .path("/etc/proctor/client.pem")
        expected.source.clientKey = .path("/etc/proctor/client.key")
        expected.source.unixSocket = "/run/proctor/mdm"
        expected.source.statusURL = "https://mdm.example.com/proctor/status"
        expected.source.statusIntervalSeconds = 900
        expected.source.statusMaxApps = 0
        expected.requireSignedBundles = true
        #expect(configuration == expected)
    }

    @Test func defaultsAndAMissingFileAreTodaysBehaviour() throws {
        let defaults = try parse("[Source]\nBundleURL=https://mdm/b\n")
        #expect(defaults.source.pollIntervalSeconds == 300)
        #expect(defaults.source.statusMaxApps == 10_000)
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
        ("[Source]\nStatusMaxApps=-1", 2, "StatusMaxApps", "expected a whole number of apps from 0 to 1000000, found \"-1\""),
        ("[Source]\nStatusMaxApps=1000001", 2, "StatusMaxApps",
         "expected a whole number of apps from 0 to 1000000, found \"1000001\""),
        ("[Source]\nStatusMaxApps=10k", 2, "StatusMaxApps", "expected a whole number of apps from 0 to 1000000, found \"10k\""),
        ("[Source]\nCACertificate=ca.pem", 2, "CACertificate", "expected an absolute file path, found \"ca.pem\""),
        ("[Policy]\nRequireSignedBundles=maybe", 2, "RequireSignedBundles", "expected yes or no, found \"maybe\""),
        ("\n[Source]\nBundleUrl=https://mdm/b", 3, "BundleUrl",
         "unknown key in [Source]; known keys: BundleURL=, PollIntervalSec=, CACertificate=, ClientCertificate=, ClientKey=, "
            + "UnixSocket=, StatusURL=, StatusIntervalSec=, StatusMaxApps="),
        ("[Source]\nUnixSocket=run/proctor/mdm", 2, "UnixSocket", "expected an absolute file path, found \"run/proctor/mdm\""),
        ("[Policy]\nBundleURL=https://mdm/b", 2, "BundleURL", "unknown key in [Policy]; known keys: RequireSignedBundles="),
        ("BundleURL=https://mdm/b", 1, "BundleURL", "outside a section: put it under [Source] or [Policy]"),
        ("[Source]\nPollIntervalSec=60\nPollIntervalSec=90", 3, "PollIntervalSec", "already set on line 2"),
        ("[Source]\nClientCertificate=/c.pem", 2, "ClientKey", "must be set when ClientCertificate is (mutual TLS needs both)"),
        ("[Source]\nClientKey=/c.key", 2, "ClientCertificate", "must be set when ClientKey is (mutual TLS needs both)"),
        ("[Source]\nClientKey=client.key", 2, "ClientKey", "expected an absolute file path or @CREDENTIAL, found \"client.key\""),
        ("[Source]\nClientCertificate=", 2, "ClientCertificate", "expected an absolute file path or @CREDENTIAL, found \"\""),
        ("[Source]\nClientKey=@", 2, "ClientKey",
         "expected a credential name after @ (a file name: no /, spaces or control characters, at most 255 bytes), found \"@\""),
        ("[Source]\nClientKey=@fleet/client.key", 2, "ClientKey",
         "expected a credential name after @ (a file name: no /, spaces or control characters, at most 255 bytes), "
            + "found \"@fleet/client.key\""),
        // A "/" followed by a combining mark is one Character that is not "/": the name is
        // checked by its scalars, so this one is not a path under $CREDENTIALS_DIRECTORY either.
        ("[Source]\nClientKey=@fleet/\u{301}client.key", 2, "ClientKey",
         "expected a credential name after @ (a file name: no /, spaces or control characters, at most 255 bytes), "
            + "found \"@fleet/\u{301}client.key\""),
        ("[Source]\nClientKey=@..", 2, "ClientKey",
         "expected a credential name after @ (a file name: no /, spaces or control characters, at most 255 bytes), found \"@..\""),
        ("[Source]\nClientKey=@fleet-client.key", 2, "ClientKey",
         "names the credential fleet-client.key, but proctord was started without $CREDENTIALS_DIRECTORY: "
            + "add LoadCredential=fleet-client.key:/etc/proctor/fleet-client.key to its unit (docs/fleet.md)"),
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
        ("https://user@mdm.example.com/b", "https://<redacted>@mdm.example.com/b"),
        ("https://us%40er:p%2F%3F%23%40ss@mdm.example.com/b?x=%40", "https://<redacted>@mdm.example.com/b?<redacted>"),
        ("https://a@b@mdm.example.com?x=1", "https://<redacted>@mdm.example.com?<redacted>"),
        ("https://mdm.example.com/s?X-Amz-Signature=abc#f", "https://mdm.example.com/s?<redacted>"),
        ("https://mdm.example.com?token=a/b", "https://mdm.example.com?<redacted>"),
        // A password with an unescaped "/": libcurl's host ends there (and with "127:18777/…"
        // it connects to 0.0.0.127:18777), but nothing before the last "@" may show.
        ("https://user:pa/ss@mdm.example.com/b", "https://<redacted>@mdm.example.com/b"),
        ("https://127:18777/ss@mdm.example.com/b", "https://<redacted>@mdm.example.com/b"),
        ("https://us/er:pass@mdm.example.com/b", "https://<redacted>@mdm.example.com/b"),
        // An "@" after a "?" or "#" may be the query's: nothing after "//" shows.
        ("https://user:pass#word@mdm.example.com/b", "https://<redacted>"),
        ("https://user:pa?ss@mdm.example.com/b", "https://<redacted>"),
        ("https://mdm.example.com/s?to=a@b", "https://<redacted>"),
        ("https://mdm.example.com/p@q", "https://<redacted>@q"),
        // A combining mark after "@" makes one Character of them, but libcurl reads bytes.
        ("https://user:pass@\u{301}mdm.example.com/b", "https://<redacted>@\u{301}mdm.example.com/b"),
        ("file:///srv/bundle.json", "file:///srv/bundle.json"),
        ("file:///srv/bundle@2.json?x", "file:///srv/bundle@2.json?<redacted>"),
        ("user:pass@mdm.example.com/b", "<redacted>@mdm.example.com/b"),
        // Only "SCHEME://" starts the authority: a "//" further on may be in the password.
        ("user:pa//ss@mdm.example.com/b", "<redacted>@mdm.example.com/b"),
        ("https:/user:pass@mdm.example.com/b", "<redacted>@mdm.example.com/b"),
        ("x y://user:pass@mdm.example.com/b", "<redacted>@mdm.example.com/b"),
        ("not a url", "not a url"),
    ])
    func aURLIsShownWithoutItsUserInformationAndQuery(_ url: String, _ shown: String) {
        #expect(FleetConfiguration.redacted(url) == shown)
    }

    /// No byte of a password ("Z…Z") or of the query ("Y") shows, whatever the user name and
    /// password hold, escaped or not.
    @Test(arguments: ["", "/", "?", "#", "@", ":", "/@", "%2F", "%3F", "%23", "%40", "%"])
    func noPartOfAPasswordOrQueryShows(_ separator: String) {
        for user in ["u", "u\(separator)v", ""] {
            for password in ["Z\(separator)Z", "\(separator)Z", "Z\(separator)"] {
                let url = "https://\(user):\(password)@mdm.example.com/b?Y=Y#Y"
                let shown = FleetConfiguration.redacted(url)
                #expect(!shown.contains("Z") && !shown.contains("Y"), "\(url) shown as \(shown)")
                #expect(shown.hasPrefix("https://<redacted>"))
            }
        }
    }

    /// A URL whose user information libcurl would not read as written is refused, naming the
    /// setting; percent-encoded, the same credentials are accepted.
    @Test(arguments: [
        ("https://user:pa/ss@mdm.example.com/b", "https://<redacted>@mdm.example.com/b"),
        ("https://127:18777/ss@mdm.example.com/b", "https://<redacted>@mdm.example.com/b"),
        ("https://user:pa?ss@mdm.example.com/b", "https://<redacted>"),
        ("https://user:pa#ss@mdm.example.com/b", "https://<redacted>"),
        ("https://us@er:pass@mdm.example.com/b", "https://<redacted>@mdm.example.com/b"),
        ("https://user:pass@mdm.example.com/p@q", "https://<redacted>@q"),
        ("https://mdm.example.com/s?to=a@b", "https://<redacted>"),
    ])
    func anAtSignThatLibcurlWouldReadDifferentlyIsRefused(_ url: String, _ shown: String) throws {
        let message = "expected \"@\" only once, after the user name and password: percent-encode \"/\", \"?\", \"#\" and \"@\" "
            + "in them (%2F, %3F, %23, %40) and \"@\" in the path or query (%40), as libcurl ends the host at the first "
            + "\"/\", \"?\" or \"#\", found \"\(shown)\""
        for key in ["BundleURL", "StatusURL"] {
            #expect(error("[Source]\n\(key)=\(url)") == ConfigurationFileError(file: "/etc/proctor/proctord.conf", line: 2, key: key,
                                                                                message: message))
        }
    }

    @Test func percentEncodedCredentialsAndAFileNameWithAnAtSignAreAccepted() throws {
        let encoded = "https://us%40er:p%2F%3F%23%40ss@mdm.example.com:8443/b?to=a%40b"
        #expect(try parse("[Source]\nBundleURL=\(encoded)").source.bundleURL == encoded)
        #expect(try parse("[Source]\nStatusURL=https://user@mdm/s").source.statusURL == "https://user@mdm/s")
        #expect(try parse("[Source]\nBundleURL=file:///srv/bundle@2.json").source.bundleURL == "file:///srv/bundle@2.json")
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

    // MARK: The client certificate and key: credentials, and the key file's protection

    /// A proctord.conf naming `certificate` and `key` as given, in `directory`.
    func mutualTLS(_ directory: TemporaryDirectory, certificate: String, key: String) throws -> String {
        try directory.write("proctord.conf", "[Source]\nBundleURL=https://mdm/b\nClientCertificate=\(certificate)\nClientKey=\(key)\n")
    }

    func privateFile(_ directory: TemporaryDirectory, _ name: String, mode: mode_t = 0o600) throws -> String {
        let path = try directory.write(name, "-----BEGIN PRIVATE KEY-----\n")
        #expect(chmod(path, mode) == 0)
        return path
    }

    func loadError(_ path: String, credentialsDirectory: String? = nil) -> ConfigurationFileError? {
        do { _ = try FleetConfiguration.load(path, credentialsDirectory: credentialsDirectory); return nil } catch { return error }
    }

    @Test func credentialsAreFoundInTheCredentialsDirectory() throws {
        let directory = try TemporaryDirectory()
        let credentials = directory.path + "/credentials"
        #expect(mkdir(credentials, 0o700) == 0)
        _ = try directory.write("credentials/fleet-client.pem", "-----BEGIN CERTIFICATE-----\n")
        _ = try privateFile(directory, "credentials/fleet-client.key", mode: 0o400)
        let conf = try mutualTLS(directory, certificate: "@fleet-client.pem", key: "@fleet-client.key")
        let source = try FleetConfiguration.load(conf, credentialsDirectory: credentials).source
        #expect(source.clientKey == .credential(name: "fleet-client.key", path: credentials + "/fleet-client.key"))
        #expect(source.clientKey?.description == "@fleet-client.key")
        let request = source.request("https://mdm/b", maximumBytes: 1)
        #expect(request.clientCertificate == credentials + "/fleet-client.pem")
        #expect(request.clientKey == credentials + "/fleet-client.key")
    }

    @Test func aNamedCredentialThatSystemdDidNotProvideStopsTheLoad() throws {
        let directory = try TemporaryDirectory()
        let key = try privateFile(directory, "client.key")
        let conf = try mutualTLS(directory, certificate: "@fleet-client.pem", key: key)
        #expect(loadError(conf, credentialsDirectory: directory.path + "/none") == ConfigurationFileError(
            file: conf, line: 3, key: "ClientCertificate",
            message: "the credential fleet-client.pem is not in $CREDENTIALS_DIRECTORY (\(directory.path)/none): "
                + "add LoadCredential=fleet-client.pem:/etc/proctor/fleet-client.pem to proctord's unit (docs/fleet.md)"))
    }

    @Test func aKeyFileOnlyItsOwnerMayAccessIsAccepted() throws {
        let directory = try TemporaryDirectory()
        let certificate = try directory.write("client.pem", "-----BEGIN CERTIFICATE-----\n")  // public: 0644 is fine
        for mode: mode_t in [0o600, 0o400] {
            let key = try privateFile(directory, "client-\(mode).key", mode: mode)
            let source = try FleetConfiguration.load(try mutualTLS(directory, certificate: certificate, key: key)).source
            #expect(source.request("https://mdm/b", maximumBytes: 1).clientKey == key)
        }
    }

    @Test(arguments: [0o640, 0o604, 0o620, 0o602, 0o610, 0o644] as [mode_t])
    func aKeyFileGroupOrOthersMayAccessIsRefused(mode: mode_t) throws {
        let directory = try TemporaryDirectory()
        let certificate = try directory.write("client.pem", "-----BEGIN CERTIFICATE-----\n")
        let key = try privateFile(directory, "client.key", mode: mode)
        let conf = try mutualTLS(directory, certificate: certificate, key: key)
        #expect(loadError(conf) == ConfigurationFileError(
            file: conf, line: 4, key: "ClientKey",
            message: "\(key) has mode \(String(mode, radix: 8)): a private key must not be accessible by group or others (chmod 600 \(key))"))
    }

    @Test func aKeyFileOwnedByAnotherUserIsRefused() throws {
        let directory = try TemporaryDirectory()
        let key = try privateFile(directory, "client.key")
        // proctord's own uid (a dynamic user's, say) may own it, and so may root.
        #expect(chown(key, 61_234, 0) == 0 || getuid() != 0)
        let owner = FleetConfiguration.ClientFile.path(key)
        let ownerUID: UInt32 = getuid() == 0 ? 61_234 : getuid()
        #expect(owner.problem(isPrivateKey: true, ownUID: ownerUID) == nil)
        #expect(owner.problem(isPrivateKey: true, ownUID: ownerUID + 1)
            == "\(key) is owned by uid \(ownerUID), expected root or proctord's own uid \(ownerUID + 1): "
                + "its owner could let others read the private key")
        // A certificate is public: only that it can be read matters.
        #expect(owner.problem(isPrivateKey: false, ownUID: ownerUID + 1) == nil)
    }

    @Test func aMissingOrOddClientFileIsRefusedAtLoad() throws {
        let directory = try TemporaryDirectory()
        let key = try privateFile(directory, "client.key")
        let conf = try mutualTLS(directory, certificate: directory.path + "/missing.pem", key: key)
        #expect(loadError(conf) == ConfigurationFileError(
            file: conf, line: 3, key: "ClientCertificate",
            message: "cannot open \(directory.path)/missing.pem: No such file or directory (ENOENT)"))
        let notAFile = try mutualTLS(directory, certificate: key, key: directory.path)
        #expect(loadError(notAFile) == ConfigurationFileError(
            file: notAFile, line: 4, key: "ClientKey", message: "\(directory.path) is not a regular file"))
    }
}
