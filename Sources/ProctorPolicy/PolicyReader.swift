import JSONCore

/// Walks a parsed policy document, builds the model from it and collects every problem on
/// the way instead of stopping at the first: a value that is wrong is reported and left
/// out, and reading goes on with its siblings.
///
/// Problems are recorded by path only, and each path is built only when a problem is
/// reported (the `@autoclosure` parameters); `locate` finds lines and columns afterwards,
/// so a valid document (the common case, and the one on proctord's start-up path) never
/// pays for recording where each of its values starts. Each object is read in one pass
/// over its members (a `switch` on the key; `object` has reported the unknown ones) rather
/// than by looking each known key up, which would hash every key again.
struct PolicyReader {
    let root: JSONValue
    let source: String?
    private(set) var problems: [PolicyProblem] = []

    init(root: JSONValue, source: String?) {
        self.root = root
        self.source = source
    }

    /// `problems` with their places in `document` (the same bytes, parsed with positions),
    /// in document order (line, then column) for output an administrator can follow from
    /// the top of the file.
    func locate(in document: JSONDocument) -> [PolicyProblem] {
        let located = problems.map { problem in
            var problem = problem
            problem.location = document.location(of: problem.path)
            return problem
        }
        return located.enumerated().sorted { a, b in
            let left = a.element.location.map { ($0.line, $0.column) } ?? (0, 0)
            let right = b.element.location.map { ($0.line, $0.column) } ?? (0, 0)
            return left != right ? left < right : a.offset < b.offset
        }.map(\.element)
    }

    mutating func report(_ path: JSONPath, _ message: String) {
        problems.append(PolicyProblem(source: source, path: path, location: nil, message: message))
    }

    // MARK: - The document

    mutating func readFragment() -> PolicyFragment {
        var fragment = PolicyFragment(source: source)
        let root = JSONPath.root
        guard let unchecked = object(self.root, at: root, keys: nil) else { return fragment }
        // A document of another schema may mean anything by its other keys: say only that.
        guard readSchema(unchecked["schema"], at: root.appending("schema")),
              let members = object(self.root, at: root, keys: ["schema", "version", "defaults", "apps"]) else {
            return fragment
        }
        if let value = members["version"] { fragment.version = readVersion(value, at: root.appending("version")) }
        if let value = members["defaults"] { fragment.defaults = readSettings(value, at: root.appending("defaults")) }
        if let value = members["apps"] { fragment.apps = readApps(value, at: root.appending("apps")) }
        return fragment
    }

    private mutating func readSchema(_ value: JSONValue?, at path: @autoclosure () -> JSONPath) -> Bool {
        guard let value else {
            report(.root, "missing \"schema\": every policy file starts with \"schema\": \(Policy.supportedSchema)")
            return false
        }
        guard let schema = value.intValue else {
            report(path(), "found \(Self.found(value)), expected the number \(Policy.supportedSchema)")
            return false
        }
        guard schema == Policy.supportedSchema else {
            report(path(), "schema \(schema) is not supported by this proctord; it understands schema \(Policy.supportedSchema)")
            return false
        }
        return true
    }

    private mutating func readVersion(_ value: JSONValue, at path: @autoclosure () -> JSONPath) -> String? {
        guard let version = string(value, at: path(), expected: "a version string such as \"2026-11-29.1\"",
                                   maxBytes: PolicyLimits.maxVersionBytes) else { return nil }
        guard !version.isEmpty, !version.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            report(path(), "found \(Self.found(value)), expected a non-empty version string without control characters")
            return nil
        }
        return version
    }

    private mutating func readApps(_ value: JSONValue, at path: @autoclosure () -> JSONPath) -> [AppID: AppPolicy] {
        guard let members = object(value, at: path(), keys: nil) else { return [:] }
        guard members.count <= PolicyLimits.maxApps else {
            report(path(), "found \(members.count) apps, expected at most \(PolicyLimits.maxApps) (PolicyLimits.maxApps)")
            return [:]
        }
        var apps: [AppID: AppPolicy] = [:]
        apps.reserveCapacity(members.count)
        for (id, entry) in members {
            if !PolicySyntax.isAppID(id) {
                report(path().appending(id), "found the app id \(Self.quoted(id)), expected a reverse-DNS id such as \"com.example.notes\" "
                    + "(letters, digits and \"-\" in two or more dot-separated parts, at most \(PolicyLimits.maxAppIDBytes) bytes)")
            }
            if let app = readApp(entry, at: path().appending(id)) { apps[id] = app }
        }
        return apps
    }

    private mutating func readApp(_ value: JSONValue, at path: @autoclosure () -> JSONPath) -> AppPolicy? {
        guard let members = object(value, at: path(), keys: ["state", "match", "config", "dlp", "compliance"]) else { return nil }
        var app = AppPolicy()
        for (key, value) in members {
            switch key {
            case "state": app.state = enumeration(value, at: path().appending("state"), as: AppState.self) ?? app.state
            case "match": app.match = readMatch(value, at: path().appending("match"))
            case "config": app.config = readConfig(value, at: path().appending("config"))
            default: break  // `dlp` and `compliance` below; `object` reported unknown keys
            }
        }
        app.settings = readSettings(members, at: path())
        return app
    }

    private mutating func readMatch(_ value: JSONValue, at path: @autoclosure () -> JSONPath) -> MatchRule? {
        guard let members = object(value, at: path(), keys: ["executable", "users"]) else { return nil }
        var match = MatchRule()
        for (key, value) in members {
            switch key {
            case "executable": match.executable = readExecutable(value, at: path().appending("executable"))
            case "users":
                match.users = list(value, at: path().appending("users"),
                                   expected: "a user name (letters, digits, \"_\", \".\", \"-\"; not starting with a digit, \".\" or \"-\") or \"*\" for any user",
                                   isValid: PolicySyntax.isUserName)
            default: break
            }
        }
        return match
    }

    private mutating func readExecutable(_ value: JSONValue, at path: @autoclosure () -> JSONPath) -> String? {
        let expected = "an absolute, normalised path such as \"/usr/bin/example-notes\" (no \".\", \"..\", empty components or trailing \"/\")"
        guard let executable = string(value, at: path(), expected: expected) else { return nil }
        guard PolicySyntax.isNormalisedAbsolutePath(executable) else {
            report(path(), "found \(Self.found(value)), expected \(expected)")
            return nil
        }
        return executable
    }

    private mutating func readConfig(_ value: JSONValue, at path: @autoclosure () -> JSONPath) -> [String: JSONValue] {
        guard let members = object(value, at: path(), keys: nil) else { return [:] }
        let size = value.serialized().count
        guard size <= PolicyLimits.maxConfigBytes else {
            report(path(), "found a config of \(size) bytes, expected at most \(PolicyLimits.maxConfigBytes) (PolicyLimits.maxConfigBytes)")
            return [:]
        }
        return members
    }

    // MARK: - Settings (under `defaults` and in each app)

    private mutating func readSettings(_ value: JSONValue, at path: @autoclosure () -> JSONPath) -> AppSettings {
        guard let members = object(value, at: path(), keys: ["dlp", "compliance"]) else { return AppSettings() }
        return readSettings(members, at: path())
    }

    /// Reads `dlp` and `compliance` from an object whose keys were already checked.
    private mutating func readSettings(_ members: [String: JSONValue], at path: @autoclosure () -> JSONPath) -> AppSettings {
        var settings = AppSettings()
        for (key, value) in members {
            switch key {
            case "dlp": settings.dlp = readDLP(value, at: path().appending("dlp"))
            case "compliance": settings.compliance = readCompliance(value, at: path().appending("compliance"))
            default: break
            }
        }
        return settings
    }

    private mutating func readDLP(_ value: JSONValue, at path: @autoclosure () -> JSONPath) -> DLPSettings {
        var dlp = DLPSettings()
        guard let members = object(value, at: path(), keys: ["clipboard", "share", "print", "screenCapture", "fileExport", "notifications"]) else {
            return dlp
        }
        for (key, value) in members {
            switch key {
            case "clipboard": readClipboard(value, at: path().appending("clipboard"), into: &dlp)
            case "share": readShare(value, at: path().appending("share"), into: &dlp)
            case "print": dlp.print = enumeration(value, at: path().appending("print"), as: Toggle.self)
            case "screenCapture": dlp.screenCapture = enumeration(value, at: path().appending("screenCapture"), as: Toggle.self)
            case "fileExport": readFileExport(value, at: path().appending("fileExport"), into: &dlp)
            case "notifications":
                dlp.notifications = enumeration(value, at: path().appending("notifications"), as: NotificationLevel.self)
            default: break
            }
        }
        return dlp
    }

    private mutating func readClipboard(_ value: JSONValue, at path: @autoclosure () -> JSONPath, into dlp: inout DLPSettings) {
        guard let members = object(value, at: path(), keys: ["level", "charLimit"]) else { return }
        for (key, value) in members {
            switch key {
            case "level": dlp.clipboardLevel = enumeration(value, at: path().appending("level"), as: ClipboardLevel.self)
            case "charLimit": dlp.clipboardCharLimit = nonNegativeInteger(value, at: path().appending("charLimit"))
            default: break
            }
        }
    }

    private mutating func readShare(_ value: JSONValue, at path: @autoclosure () -> JSONPath, into dlp: inout DLPSettings) {
        guard let members = object(value, at: path(), keys: ["send", "receive", "exempt"]) else { return }
        for (key, value) in members {
            switch key {
            case "send": dlp.shareSend = enumeration(value, at: path().appending("send"), as: ShareLevel.self)
            case "receive": dlp.shareReceive = enumeration(value, at: path().appending("receive"), as: ShareLevel.self)
            case "exempt":
                dlp.shareExempt = list(value, at: path().appending("exempt"),
                                       expected: "an app id or an app-id glob with \"*\" such as \"com.example.*\"",
                                       isValid: PolicySyntax.isAppIDGlob)
            default: break
            }
        }
    }

    private mutating func readFileExport(_ value: JSONValue, at path: @autoclosure () -> JSONPath, into dlp: inout DLPSettings) {
        guard let members = object(value, at: path(), keys: ["allow", "deny", "enforcement"]) else { return }
        let expected = "an absolute path glob such as \"/home/*/Documents/**\" (relative paths are refused; "
            + "no \".\", \"..\" or empty components; \"**\" only as a whole component)"
        for (key, value) in members {
            switch key {
            case "allow": dlp.fileExportAllow = list(value, at: path().appending("allow"), expected: expected, isValid: PolicySyntax.isPathGlob)
            case "deny": dlp.fileExportDeny = list(value, at: path().appending("deny"), expected: expected, isValid: PolicySyntax.isPathGlob)
            case "enforcement":
                dlp.fileExportEnforcement = enumeration(value, at: path().appending("enforcement"), as: ExportEnforcement.self)
            default: break
            }
        }
    }

    private mutating func readCompliance(_ value: JSONValue, at path: @autoclosure () -> JSONPath) -> ComplianceSettings {
        var compliance = ComplianceSettings()
        guard let members = object(value, at: path(), keys: ["minVersion", "onViolation", "offlineGraceSeconds",
                                                              "offlineWipeSeconds"]) else {
            return compliance
        }
        for (key, value) in members {
            switch key {
            case "minVersion": compliance.minVersion = readMinVersion(value, at: path().appending("minVersion"))
            case "onViolation": compliance.onViolation = enumeration(value, at: path().appending("onViolation"), as: Violation.self)
            case "offlineGraceSeconds":
                compliance.offlineGraceSeconds = nonNegativeInteger(value, at: path().appending("offlineGraceSeconds"))
            case "offlineWipeSeconds":
                compliance.offlineWipeSeconds = positiveInteger(value, at: path().appending("offlineWipeSeconds"))
            default: break
            }
        }
        // Past the wipe the app has no data to launch with: a wipe inside the grace would take
        // the data of an app still allowed to run offline.
        if let wipe = compliance.offlineWipeSeconds, let grace = compliance.offlineGraceSeconds, wipe <= grace {
            report(path().appending("offlineWipeSeconds"),
                   "found \(wipe), expected more than offlineGraceSeconds (\(grace)): the data is wiped after the app may no longer run offline")
        }
        return compliance
    }

    private mutating func readMinVersion(_ value: JSONValue, at path: @autoclosure () -> JSONPath) -> SemanticVersion? {
        let expected = "a semantic version such as \"2.3.0\" or \"1.0.0-rc.1\""
        guard let text = string(value, at: path(), expected: expected) else { return nil }
        guard let version = SemanticVersion(text) else {
            report(path(), "found \(Self.found(value)), expected \(expected)")
            return nil
        }
        return version
    }

    // MARK: - Typed values

    /// The members of an object, after reporting each key not in `keys` (nil: any key).
    private mutating func object(_ value: JSONValue, at path: @autoclosure () -> JSONPath, keys: [String]?) -> [String: JSONValue]? {
        guard let members = value.objectValue else {
            report(path(), "found \(Self.found(value)), expected an object")
            return nil
        }
        if let keys {
            for key in members.keys where !keys.contains(key) {
                var message = "unknown key \(Self.quoted(key))"
                if let suggestion = SpellingSuggestion.closest(to: key, in: keys) {
                    message += ", did you mean \"\(suggestion)\"?"
                } else {
                    message += ", expected one of " + keys.map { "\"\($0)\"" }.joined(separator: ", ")
                }
                report(path().appending(key), message)
            }
        }
        return members
    }

    private mutating func string(_ value: JSONValue, at path: @autoclosure () -> JSONPath, expected: String,
                                 maxBytes: Int = PolicyLimits.maxStringBytes) -> String? {
        guard let text = value.stringValue else {
            report(path(), "found \(Self.found(value)), expected \(expected)")
            return nil
        }
        guard text.utf8.count <= maxBytes else {
            report(path(), "found a string of \(text.utf8.count) bytes, expected at most \(maxBytes)")
            return nil
        }
        return text
    }

    private mutating func enumeration<Value: RawRepresentable<String> & CaseIterable>(
        _ value: JSONValue, at path: @autoclosure () -> JSONPath, as type: Value.Type
    ) -> Value? {
        guard let text = value.stringValue, let result = Value(rawValue: text) else {
            let expected = Value.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            report(path(), "found \(Self.found(value)), expected one of \(expected)")
            return nil
        }
        return result
    }

    private mutating func nonNegativeInteger(_ value: JSONValue, at path: @autoclosure () -> JSONPath) -> Int? {
        guard let number = value.intValue, number >= 0 else {
            report(path(), "found \(Self.found(value)), expected a non-negative integer")
            return nil
        }
        return number
    }

    private mutating func positiveInteger(_ value: JSONValue, at path: @autoclosure () -> JSONPath) -> Int? {
        guard let number = value.intValue, number > 0 else {
            report(path(), "found \(Self.found(value)), expected a positive integer (seconds)")
            return nil
        }
        return number
    }

    private mutating func list(_ value: JSONValue, at path: @autoclosure () -> JSONPath, expected: String,
                               isValid: (String) -> Bool) -> [String]? {
        guard let elements = value.arrayValue else {
            report(path(), "found \(Self.found(value)), expected a list of strings, each \(expected)")
            return nil
        }
        guard elements.count <= PolicyLimits.maxListCount else {
            report(path(), "found a list of \(elements.count) entries, expected at most \(PolicyLimits.maxListCount) (PolicyLimits.maxListCount)")
            return nil
        }
        var result: [String] = []
        var allValid = true
        for (index, element) in elements.enumerated() {
            guard let text = string(element, at: path().appending(index: index), expected: expected) else { allValid = false; continue }
            guard isValid(text) else {
                report(path().appending(index: index), "found \(Self.found(element)), expected \(expected)")
                allValid = false
                continue
            }
            result.append(text)
        }
        // Half a list would quietly widen or narrow a rule: keep none of it.
        return allValid ? result : nil
    }

    // MARK: - Rendering found values

    /// A value as a message shows it: strings quoted (long ones shortened), numbers and
    /// literals as written, containers by type.
    static func found(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): quoted(text)
        case .number, .bool, .null: value.serializedString()
        case .array, .object: value.typeDescription
        }
    }

    static func quoted(_ text: String) -> String {
        let limit = 80
        guard text.unicodeScalars.count > limit else { return JSONValue.string(text).serializedString() }
        let prefix = String(String.UnicodeScalarView(text.unicodeScalars.prefix(limit)))
        return JSONValue.string(prefix).serializedString() + "… (\(text.utf8.count) bytes)"
    }
}
