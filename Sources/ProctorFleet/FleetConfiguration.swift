import Glibc
import LinuxIO

/// What `CONFIG_DIR/proctord.conf` says: where proctord pulls signed policy from and how it
/// trusts it. A systemd-style file:
///
///     [Source]
///     BundleURL=https://mdm.example.com/proctor/bundle.json
///     PollIntervalSec=300
///     CACertificate=/etc/proctor/mdm-ca.pem
///     ClientCertificate=/etc/proctor/client.pem
///     ClientKey=@fleet-client.key
///     StatusURL=https://mdm.example.com/proctor/status
///     StatusIntervalSec=3600
///     StatusMaxApps=10000
///
///     [Policy]
///     RequireSignedBundles=yes
///
/// No file is `FleetConfiguration()`: no pulling, unsigned policy accepted (Proctor before fleets).
public struct FleetConfiguration: Sendable, Hashable {
    /// The `[Source]` section: where bundles come from.
    public struct Source: Sendable, Hashable {
        /// The bundle's `https://` (or, for tests, `file://`) URL; nil: nothing is pulled.
        public var bundleURL: String?
        /// Seconds between polls, before jitter.
        public var pollIntervalSeconds = 300
        /// PEM file of the CA certificates that verify the server; nil: the system's CAs.
        public var caCertificate: String?
        /// PEM client certificate and its key for mutual TLS; both or neither. Each a file or a
        /// systemd credential (`@NAME`, see `ClientFile`).
        public var clientCertificate: ClientFile?
        public var clientKey: ClientFile?
        /// Where status documents are POSTed; nil: none are.
        public var statusURL: String?
        /// Seconds between status documents at the latest.
        public var statusIntervalSeconds = 3600
        /// `StatusMaxApps=`: the most apps one status document lists (the most relevant ones;
        /// the document says how many it left out). ≈ 800 bytes an app: 8 MB by default.
        public var statusMaxApps = 10_000
        /// `UnixSocket=`: connect to this AF_UNIX socket instead of the URL's host (a
        /// `systemd-socket-proxyd` forwarding to the MDM), so proctord itself needs no network.
        /// TLS, its host name check and the `Host:` header still use the URL's host.
        public var unixSocket: String?

        public init() {}
    }

    public var source = Source()
    /// `[Policy] RequireSignedBundles=`: when true, only signed bundles are applied, from any
    /// path (pulled or `ApplyPolicy`).
    public var requireSignedBundles = false

    public init() {}

    /// The largest proctord.conf read: a few lines are expected.
    public static let maximumFileBytes = 64 * 1024
    /// Bounds of the interval settings: at least a second, at most a week.
    public static let intervalRange = 1...(7 * 24 * 3600)
    /// Bounds of `StatusMaxApps=`: none (the status alone) up to a million (≈ 800 MB).
    public static let statusMaxAppsRange = 0...1_000_000

    /// Reads `path`; a missing file is the default configuration. `credentialsDirectory` is
    /// systemd's `$CREDENTIALS_DIRECTORY`, where `@NAME` files are. The client certificate and
    /// key must be usable (`ClientFile.problem`): a key others may read stops proctord here,
    /// not at a poll.
    public static func load(_ path: String, credentialsDirectory: String? = nil) throws(ConfigurationFileError)
        -> FleetConfiguration {
        let descriptor: FileDescriptor
        do { descriptor = try FileDescriptor.open(path, O_RDONLY) } catch {
            if error == .noSuchFileOrDirectory { return FleetConfiguration() }
            throw ConfigurationFileError(file: path, message: "cannot open: \(error)")
        }
        defer { try? descriptor.close() }
        let bytes: [UInt8]
        do { bytes = try descriptor.readAll(limit: maximumFileBytes) } catch {
            switch error {
            case .limitExceeded: throw ConfigurationFileError(file: path, message: "larger than \(maximumFileBytes) bytes")
            case .read(let errno): throw ConfigurationFileError(file: path, message: "cannot read: \(errno)")
            }
        }
        var reader = ConfigurationReader(file: path, credentialsDirectory: credentialsDirectory)
        let configuration = try reader.read(bytes)
        try reader.checkClientFiles()
        return configuration
    }

    /// Parses the text of a proctord.conf; `file` names it in errors. Files are not looked at.
    public static func parse(_ bytes: [UInt8], file: String, credentialsDirectory: String? = nil)
        throws(ConfigurationFileError) -> FleetConfiguration {
        var reader = ConfigurationReader(file: file, credentialsDirectory: credentialsDirectory)
        return try reader.read(bytes)
    }
}

/// One mistake in proctord.conf: the file, the line (1-based), the key, and what was expected.
public struct ConfigurationFileError: Error, Hashable, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    public var key: String?
    public var message: String

    public init(file: String, line: Int? = nil, key: String? = nil, message: String) {
        self.file = file
        self.line = line
        self.key = key
        self.message = message
    }

    /// `FILE:LINE: KEY=: MESSAGE`, like a compiler, so editors can jump to it.
    public var description: String {
        file + (line.map { ":\($0)" } ?? "") + ": " + (key.map { "\($0)=: " } ?? "") + message
    }
}

/// The line-by-line reader behind `FleetConfiguration.parse`.
private struct ConfigurationReader {
    let file: String
    let credentialsDirectory: String?
    var configuration = FleetConfiguration()
    var section: String?
    var seen: [String: Int] = [:]  // "Section.Key" -> line

    init(file: String, credentialsDirectory: String?) {
        self.file = file
        self.credentialsDirectory = credentialsDirectory
    }

    static let keys: [String: [String]] = [
        "Source": ["BundleURL", "PollIntervalSec", "CACertificate", "ClientCertificate", "ClientKey", "UnixSocket", "StatusURL",
                   "StatusIntervalSec", "StatusMaxApps"],
        "Policy": ["RequireSignedBundles"],
    ]

    mutating func read(_ bytes: [UInt8]) throws(ConfigurationFileError) -> FleetConfiguration {
        guard let text = String(validating: bytes, as: UTF8.self) else { throw error(nil, nil, "not UTF-8 text") }
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            try readLine(rawLine.trimmed, number: index + 1)
        }
        let source = configuration.source
        if (source.clientCertificate == nil) != (source.clientKey == nil) {
            let missing = source.clientKey == nil ? "ClientKey" : "ClientCertificate"
            throw error(seen["Source.ClientCertificate"] ?? seen["Source.ClientKey"], missing,
                        "must be set when \(missing == "ClientKey" ? "ClientCertificate" : "ClientKey") is (mutual TLS needs both)")
        }
        return configuration
    }

    /// The client certificate and key, on the file system (after `read`).
    func checkClientFiles() throws(ConfigurationFileError) {
        let source = configuration.source
        for (key, file, isPrivateKey) in [("ClientCertificate", source.clientCertificate, false), ("ClientKey", source.clientKey, true)] {
            if let problem = file?.problem(isPrivateKey: isPrivateKey) { throw error(seen["Source.\(key)"], key, problem) }
        }
    }

    private mutating func readLine(_ line: Substring, number: Int) throws(ConfigurationFileError) {
        if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { return }
        if line.hasPrefix("[") {
            guard line.hasSuffix("]") else { throw error(number, nil, "expected a section header such as [Source]") }
            let name = String(line.dropFirst().dropLast())
            guard Self.keys[name] != nil else {
                throw error(number, nil, "unknown section [\(name)], expected [Source] or [Policy]")
            }
            section = name
            return
        }
        guard let equals = line.firstIndex(of: "=") else {
            throw error(number, nil, "expected KEY=VALUE, a [Section] header or a # comment")
        }
        let key = String(line[..<equals].trimmed)
        let value = String(line[line.index(after: equals)...].trimmed)
        guard let section else { throw error(number, key, "outside a section: put it under [Source] or [Policy]") }
        guard Self.keys[section]!.contains(key) else {
            let known = Self.keys[section]!.joined(separator: "=, ") + "="
            throw error(number, key, "unknown key in [\(section)]; known keys: \(known)")
        }
        if let earlier = seen["\(section).\(key)"] { throw error(number, key, "already set on line \(earlier)") }
        seen["\(section).\(key)"] = number
        try assign(key, value, line: number)
    }

    private mutating func assign(_ key: String, _ value: String, line: Int) throws(ConfigurationFileError) {
        switch key {
        case "BundleURL": configuration.source.bundleURL = try url(value, key, line)
        case "StatusURL": configuration.source.statusURL = try url(value, key, line)
        case "PollIntervalSec": configuration.source.pollIntervalSeconds = try seconds(value, key, line)
        case "StatusIntervalSec": configuration.source.statusIntervalSeconds = try seconds(value, key, line)
        case "StatusMaxApps": configuration.source.statusMaxApps = try appCount(value, key, line)
        case "CACertificate": configuration.source.caCertificate = try path(value, key, line)
        case "ClientCertificate": configuration.source.clientCertificate = try clientFile(value, key, line)
        case "ClientKey": configuration.source.clientKey = try clientFile(value, key, line)
        case "UnixSocket": configuration.source.unixSocket = try path(value, key, line)
        case "RequireSignedBundles": configuration.requireSignedBundles = try boolean(value, key, line)
        default: preconditionFailure("a key in ConfigurationReader.keys without a case: \(key)")
        }
    }

    private func url(_ value: String, _ key: String, _ line: Int) throws(ConfigurationFileError) -> String {
        let lowered = value.lowercased()
        guard lowered.hasPrefix("https://") && value.count > 8 || lowered.hasPrefix("file:///") else {
            throw error(line, key, "expected an https:// URL (or file:///PATH), found \"\(FleetConfiguration.redacted(value))\"")
        }
        guard value.utf8.count <= 2048, !value.contains(where: { $0.isWhitespace || $0.asciiValue.map { $0 < 0x20 } == true }) else {
            throw error(line, key, "expected a URL of at most 2048 bytes without spaces or control characters")
        }
        if lowered.hasPrefix("https://"), let problem = FleetConfiguration.userInformationProblem(value) {
            throw error(line, key, problem + ", found \"\(FleetConfiguration.redacted(value))\"")
        }
        return value
    }

    private func seconds(_ value: String, _ key: String, _ line: Int) throws(ConfigurationFileError) -> Int {
        try wholeNumber(value, key, line, of: "seconds", in: FleetConfiguration.intervalRange)
    }

    private func appCount(_ value: String, _ key: String, _ line: Int) throws(ConfigurationFileError) -> Int {
        try wholeNumber(value, key, line, of: "apps", in: FleetConfiguration.statusMaxAppsRange)
    }

    private func wholeNumber(_ value: String, _ key: String, _ line: Int, of unit: String,
                             in range: ClosedRange<Int>) throws(ConfigurationFileError) -> Int {
        guard let number = Int(value), range.contains(number) else {
            throw error(line, key, "expected a whole number of \(unit) from \(range.lowerBound) to \(range.upperBound), "
                + "found \"\(value)\"")
        }
        return number
    }

    private func path(_ value: String, _ key: String, _ line: Int) throws(ConfigurationFileError) -> String {
        guard value.hasPrefix("/"), value.utf8.count < PATH_MAX else {
            throw error(line, key, "expected an absolute file path, found \"\(value)\"")
        }
        return value
    }

    /// `/PATH`, or `@NAME`: the credential NAME in `$CREDENTIALS_DIRECTORY`, a file name as
    /// systemd allows for a credential (no `/`, not `.` or `..`, at most 255 bytes).
    private func clientFile(_ value: String, _ key: String, _ line: Int) throws(ConfigurationFileError)
        -> FleetConfiguration.ClientFile {
        guard value.hasPrefix("@") else {
            guard value.hasPrefix("/"), value.utf8.count < PATH_MAX else {
                throw error(line, key, "expected an absolute file path or @CREDENTIAL, found \"\(value)\"")
            }
            return .path(value)
        }
        let name = String(value.dropFirst())
        guard !name.isEmpty, name.utf8.count <= Int(NAME_MAX), name != ".", name != "..",
              // Scalars, not Characters: "/" and a combining mark after it are one Character.
              !name.unicodeScalars.contains(where: { $0 == "/" || $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F })
        else {
            throw error(line, key, "expected a credential name after @ (a file name: no /, spaces or control characters, "
                + "at most \(NAME_MAX) bytes), found \"\(value)\"")
        }
        guard let credentialsDirectory else {
            throw error(line, key, "names the credential \(name), but proctord was started without $CREDENTIALS_DIRECTORY: "
                + "add LoadCredential=\(name):/etc/proctor/\(name) to its unit (docs/fleet.md)")
        }
        return .credential(name: name, path: credentialsDirectory + "/" + name)
    }

    private func boolean(_ value: String, _ key: String, _ line: Int) throws(ConfigurationFileError) -> Bool {
        switch value.lowercased() {
        case "yes", "true", "on", "1": return true
        case "no", "false", "off", "0": return false
        default: throw error(line, key, "expected yes or no, found \"\(value)\"")
        }
    }

    private func error(_ line: Int?, _ key: String?, _ message: String) -> ConfigurationFileError {
        ConfigurationFileError(file: file, line: line, key: key, message: message)
    }
}

extension Substring {
    fileprivate var trimmed: Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" || first == "\r" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" || last == "\r" { text.removeLast() }
        return text
    }
}

extension FleetConfiguration {
    /// Whether `other` is this configuration with the same bytes in every path and URL. `==`
    /// compares them as Swift strings, by canonical equivalence ("café" with a composed é
    /// equals "café" with a decomposed one), but a path is bytes to the kernel: respelt, it
    /// names another file, and a reload that changed only that must take it.
    public func isIdentical(to other: FleetConfiguration) -> Bool {
        self == other && zip(source.texts, other.source.texts).allSatisfy { mine, theirs in
            mine.map { Array($0.utf8) } == theirs.map { Array($0.utf8) }
        }
    }
}

extension FleetConfiguration.Source {
    /// Every setting that is text, in a fixed order (a credential's path ends with its name).
    fileprivate var texts: [String?] {
        [bundleURL, caCertificate, clientCertificate?.path, clientKey?.path, statusURL, unixSocket]
    }

    /// A request to `url` (the bundle or the status URL) with this source's TLS settings and socket.
    public func request(_ url: String, maximumBytes: Int) -> FetchRequest {
        var request = FetchRequest(url: url, caCertificate: caCertificate, clientCertificate: clientCertificate?.path,
                                   clientKey: clientKey?.path, maximumBytes: maximumBytes)
        request.unixSocket = unixSocket
        return request
    }
}
