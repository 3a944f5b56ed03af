import JSONCore

/// The start-up path's reader: a policy file's bytes straight to a `PolicyFragment`, without
/// the `JSONValue` tree `PolicyReader` walks (only each app's `config` stays JSON, as the
/// model keeps it). Its dictionaries and reference counts cost several times the model.
///
/// It accepts only what `PolicyReader` accepts and builds the same fragment. At the first
/// thing it does not expect — a syntax error, an unknown or repeated key, a value of the
/// wrong type or beyond its limit — it gives up, and `PolicyFragment.parse` reads the
/// document again with `PolicyReader`, which reports every problem with its place: a
/// shortcut here never changes what is accepted or what an error says.
struct PolicyFastReader {
    private var json: JSONPullReader
    /// The second half of the `apps` members, read on another thread (`AppsSplit`), until
    /// this reader reaches where that half began.
    private var split: AppsSplit?

    /// The fragment in `bytes`, or nil when the validating reader must look at them.
    /// `splitting`: a large document's apps are read on two threads (`AppsSplit`).
    static func read(_ bytes: [UInt8], source: String?, splitting: Bool = false) -> PolicyFragment? {
        var reader = PolicyFastReader(json: JSONPullReader(bytes, maxDepth: PolicyLimits.maxNestingDepth))
        if splitting { reader.split = AppsSplit.start(bytes) }
        // Also when this reader gives up before reaching the second half: stop that half.
        defer { reader.split?.abandon() }
        do {
            let fragment = try reader.readFragment(source: source)
            try reader.json.end()
            return fragment
        } catch {
            return nil
        }
    }

    /// The policy that comes next in `json` (a member of a larger document, such as a
    /// bundle's payload), or nil when it is not a valid complete policy.
    static func readPolicy(_ json: inout JSONPullReader) -> Policy? {
        var reader = PolicyFastReader(json: json)
        defer { json = reader.json }
        guard let fragment = try? reader.readFragment(source: nil), let version = fragment.version else { return nil }
        return Policy(version: version, defaults: fragment.defaults, apps: fragment.apps)
    }

    init(json: JSONPullReader) { self.json = json }

    private mutating func readFragment(source: String?) throws(JSONParseError) -> PolicyFragment {
        var fragment = PolicyFragment(source: source)
        var seen = SeenKeys()
        try json.beginObject()
        while let key = try json.nextKey() {
            switch key {
            case "schema":
                try seen.insert(0, json)
                guard try json.number() == Double(Policy.supportedSchema) else { throw json.unexpected() }
            case "version":
                try seen.insert(1, json)
                fragment.version = try readVersion()
            case "defaults":
                try seen.insert(2, json)
                fragment.defaults = try readSettings()
            case "apps":
                try seen.insert(3, json)
                fragment.apps = try readApps()
            default: throw json.unexpected()
            }
        }
        guard seen.contains(0) else { throw json.unexpected() }
        return fragment
    }

    private mutating func readVersion() throws(JSONParseError) -> String {
        let version = try json.string()
        guard !version.isEmpty, version.utf8.count <= PolicyLimits.maxVersionBytes,
              !version.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw json.unexpected()
        }
        return version
    }

    private mutating func readApps() throws(JSONParseError) -> [AppID: AppPolicy] {
        var apps: [AppID: AppPolicy] = [:]
        var isSized = false
        try json.beginObject()
        while try readApp(into: &apps) {
            guard let split else { continue }
            if !isSized, json.offset >= split.boundary / 4 {
                // Room for both halves at once: growing, then adding the other half, would
                // rehash these apps twice or three times.
                isSized = true
                apps.reserveCapacity(split.expectedApps(read: apps.count, upTo: json.offset))
            }
            guard json.offset >= split.boundary else { continue }
            self.split = nil
            // Exactly at the boundary, between two members of `apps`, this reader is in the
            // state the other began in, so the other read what this one would read next.
            guard json.offset == split.boundary, let rest = split.join() else {
                split.abandon()
                continue
            }
            // What reading on would refuse: too many apps, or one named in both halves.
            guard apps.count + rest.apps.count <= PolicyLimits.maxApps else { throw json.unexpected() }
            apps.reserveCapacity(apps.count + rest.apps.count)
            for (id, app) in rest.apps {
                guard apps.updateValue(app, forKey: id) == nil else { throw json.unexpected() }
            }
            json = rest.json
            return apps
        }
        return apps
    }

    /// Reads the next member of the `apps` object into `apps`; false at the object's end (consumed).
    mutating func readApp(into apps: inout [AppID: AppPolicy]) throws(JSONParseError) -> Bool {
        guard let id = try json.nextKey() else { return false }
        guard apps.count < PolicyLimits.maxApps, PolicySyntax.isAppID(id) else { throw json.unexpected() }
        let app = try readApp()
        guard apps.updateValue(app, forKey: id) == nil else { throw json.unexpected() }
        return true
    }

    /// The members of the `apps` object from here to its end (for `AppsSplit`), and the offset
    /// past that end; nil as soon as `isAbandoned`.
    mutating func readRemainingApps(until isAbandoned: () -> Bool) throws(JSONParseError) -> (apps: [AppID: AppPolicy], end: Int)? {
        var apps: [AppID: AppPolicy] = [:]
        while try readApp(into: &apps) {
            if isAbandoned() { return nil }
        }
        return (apps, json.offset)
    }

    private mutating func readApp() throws(JSONParseError) -> AppPolicy {
        var app = AppPolicy()
        var seen = SeenKeys()
        try json.beginObject()
        while let key = try json.nextKey() {
            switch key {
            case "state":
                try seen.insert(0, json)
                app.state = try readEnumeration(AppState.self)
            case "match":
                try seen.insert(1, json)
                app.match = try readMatch()
            case "config":
                try seen.insert(2, json)
                app.config = try readConfig()
            case "dlp":
                try seen.insert(3, json)
                app.settings.dlp = try readDLP()
            case "compliance":
                try seen.insert(4, json)
                app.settings.compliance = try readCompliance()
            default: throw json.unexpected()
            }
        }
        return app
    }

    private mutating func readMatch() throws(JSONParseError) -> MatchRule {
        var match = MatchRule()
        var seen = SeenKeys()
        try json.beginObject()
        while let key = try json.nextKey() {
            switch key {
            case "executable":
                try seen.insert(0, json)
                match.executable = try readString(PolicySyntax.isNormalisedAbsolutePath)
            case "users":
                try seen.insert(1, json)
                match.users = try readList(PolicySyntax.isUserName)
            default: throw json.unexpected()
            }
        }
        return match
    }

    private mutating func readConfig() throws(JSONParseError) -> [String: JSONValue] {
        guard try json.peek() == .object, case .object(let members) = try json.value(),
              JSONValue.object(members).serialized().count <= PolicyLimits.maxConfigBytes else {
            throw json.unexpected()
        }
        return members
    }

    private mutating func readSettings() throws(JSONParseError) -> AppSettings {
        var settings = AppSettings()
        var seen = SeenKeys()
        try json.beginObject()
        while let key = try json.nextKey() {
            switch key {
            case "dlp":
                try seen.insert(0, json)
                settings.dlp = try readDLP()
            case "compliance":
                try seen.insert(1, json)
                settings.compliance = try readCompliance()
            default: throw json.unexpected()
            }
        }
        return settings
    }

    private mutating func readDLP() throws(JSONParseError) -> DLPSettings {
        var dlp = DLPSettings()
        var seen = SeenKeys()
        try json.beginObject()
        while let key = try json.nextKey() {
            switch key {
            case "clipboard":
                try seen.insert(0, json)
                var members = SeenKeys()
                try json.beginObject()
                while let key = try json.nextKey() {
                    switch key {
                    case "level":
                        try members.insert(0, json)
                        dlp.clipboardLevel = try readEnumeration(ClipboardLevel.self)
                    case "charLimit":
                        try members.insert(1, json)
                        dlp.clipboardCharLimit = try readNonNegativeInteger()
                    default: throw json.unexpected()
                    }
                }
            case "share":
                try seen.insert(1, json)
                var members = SeenKeys()
                try json.beginObject()
                while let key = try json.nextKey() {
                    switch key {
                    case "send":
                        try members.insert(0, json)
                        dlp.shareSend = try readEnumeration(ShareLevel.self)
                    case "receive":
                        try members.insert(1, json)
                        dlp.shareReceive = try readEnumeration(ShareLevel.self)
                    case "exempt":
                        try members.insert(2, json)
                        dlp.shareExempt = try readList(PolicySyntax.isAppIDGlob)
                    default: throw json.unexpected()
                    }
                }
            case "print":
                try seen.insert(2, json)
                dlp.print = try readEnumeration(Toggle.self)
            case "screenCapture":
                try seen.insert(3, json)
                dlp.screenCapture = try readEnumeration(Toggle.self)
            case "fileExport":
                try seen.insert(4, json)
                var members = SeenKeys()
                try json.beginObject()
                while let key = try json.nextKey() {
                    switch key {
                    case "allow":
                        try members.insert(0, json)
                        dlp.fileExportAllow = try readList(PolicySyntax.isPathGlob)
                    case "deny":
                        try members.insert(1, json)
                        dlp.fileExportDeny = try readList(PolicySyntax.isPathGlob)
                    case "enforcement":
                        try members.insert(2, json)
                        dlp.fileExportEnforcement = try readEnumeration(ExportEnforcement.self)
                    default: throw json.unexpected()
                    }
                }
            case "notifications":
                try seen.insert(5, json)
                dlp.notifications = try readEnumeration(NotificationLevel.self)
            default: throw json.unexpected()
            }
        }
        return dlp
    }

    private mutating func readCompliance() throws(JSONParseError) -> ComplianceSettings {
        var compliance = ComplianceSettings()
        var seen = SeenKeys()
        try json.beginObject()
        while let key = try json.nextKey() {
            switch key {
            case "minVersion":
                try seen.insert(0, json)
                guard let version = SemanticVersion(try readString { _ in true }) else { throw json.unexpected() }
                compliance.minVersion = version
            case "onViolation":
                try seen.insert(1, json)
                compliance.onViolation = try readEnumeration(Violation.self)
            case "offlineGraceSeconds":
                try seen.insert(2, json)
                compliance.offlineGraceSeconds = try readNonNegativeInteger()
            case "offlineWipeSeconds":
                try seen.insert(3, json)
                let seconds = try readNonNegativeInteger()
                guard seconds > 0 else { throw json.unexpected() }
                compliance.offlineWipeSeconds = seconds
            default: throw json.unexpected()
            }
        }
        // `PolicyReader` refuses a wipe within the grace (and says why).
        if let wipe = compliance.offlineWipeSeconds, let grace = compliance.offlineGraceSeconds, wipe <= grace {
            throw json.unexpected()
        }
        return compliance
    }

    // MARK: - Typed values, with `PolicyReader`'s limits

    private mutating func readString(_ isValid: (String) -> Bool) throws(JSONParseError) -> String {
        let text = try json.string()
        guard text.utf8.count <= PolicyLimits.maxStringBytes, isValid(text) else { throw json.unexpected() }
        return text
    }

    private mutating func readList(_ isValid: (String) -> Bool) throws(JSONParseError) -> [String] {
        var list: [String] = []
        try json.beginArray()
        while try json.nextElement() {
            guard list.count < PolicyLimits.maxListCount else { throw json.unexpected() }
            list.append(try readString(isValid))
        }
        return list
    }

    private mutating func readEnumeration<Value: RawRepresentable<String>>(_ type: Value.Type) throws(JSONParseError) -> Value {
        guard let value = Value(rawValue: try json.string()) else { throw json.unexpected() }
        return value
    }

    /// `JSONValue.intValue`'s rule (integral, within ±2^53), and not negative.
    private mutating func readNonNegativeInteger() throws(JSONParseError) -> Int {
        let number = try json.number()
        guard number.rounded(.towardZero) == number, number >= 0, number <= 9_007_199_254_740_992 else { throw json.unexpected() }
        return Int(number)
    }
}

/// The keys of one object read so far, by their index in the object's schema: a key said
/// twice is a duplicate, which `JSONParser` refuses.
private struct SeenKeys {
    private var bits: UInt32 = 0

    func contains(_ index: Int) -> Bool { bits & (1 << index) != 0 }

    mutating func insert(_ index: Int, _ json: JSONPullReader) throws(JSONParseError) {
        guard !contains(index) else { throw json.unexpected() }
        bits |= 1 << index
    }
}
