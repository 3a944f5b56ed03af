import JSONCore

/// Which layer of a policy supplied a setting.
enum RuleLayer: UInt8, Sendable {
    case builtin = 0, defaults = 1, app = 2
}

/// A setting a decision can rest on; with a layer (and the asking app's id for the app layer)
/// it names the deciding rule, so a compiled policy stores no rule text per app.
enum RuleSetting: UInt8, Sendable, CaseIterable {
    case clipboardLevel, clipboardCharLimit, shareSend, shareReceive, shareExempt, print, screenCapture
    case fileExportAllow, fileExportDeny, notifications, minVersion, onViolation, offlineGraceSeconds
    /// `apps["x"].state`: always the app layer.
    case state

    /// The rule's path below its layer (`.dlp.clipboard.level`).
    var suffix: StaticString {
        switch self {
        case .clipboardLevel: ".dlp.clipboard.level"
        case .clipboardCharLimit: ".dlp.clipboard.charLimit"
        case .shareSend: ".dlp.share.send"
        case .shareReceive: ".dlp.share.receive"
        case .shareExempt: ".dlp.share.exempt"
        case .print: ".dlp.print"
        case .screenCapture: ".dlp.screenCapture"
        case .fileExportAllow: ".dlp.fileExport.allow"
        case .fileExportDeny: ".dlp.fileExport.deny"
        case .notifications: ".dlp.notifications"
        case .minVersion: ".compliance.minVersion"
        case .onViolation: ".compliance.onViolation"
        case .offlineGraceSeconds: ".compliance.offlineGraceSeconds"
        case .state: ".state"
        }
    }

    /// The rule of the built-in default (`BuiltinDefaults.Rule`); a built-in list's entries
    /// share it.
    var builtinRule: String {
        typealias Rule = BuiltinDefaults.Rule
        return switch self {
        case .clipboardLevel: Rule.clipboardLevel
        case .clipboardCharLimit: Rule.clipboardCharLimit
        case .shareSend: Rule.shareSend
        case .shareReceive: Rule.shareReceive
        case .shareExempt: Rule.shareExempt
        case .print: Rule.print
        case .screenCapture: Rule.screenCapture
        case .fileExportAllow: Rule.fileExportAllow
        case .fileExportDeny: Rule.fileExportDeny
        case .notifications: Rule.notifications
        case .minVersion: Rule.minVersion
        case .onViolation: Rule.onViolation
        case .offlineGraceSeconds: Rule.offlineGraceSeconds
        case .state: Rule.unknownApp  // never used: a state always comes from the app entry
        }
    }
}

/// The rule an engine decision rests on, kept in the parts the engine has at hand and rendered
/// to text only when read: building or retaining a per-app string while deciding would cost a
/// memory round trip (or an allocation) per decision. An app-layer rule does not hold the asking
/// app's id: whoever renders it passes the id (`askingApp`), which the caller of the engine holds
/// anyway (the request, proctord's session), so a decision holds no reference at all and costs
/// neither a retain nor a release of the id's string. Rendering writes bytes into the caller's
/// array in place (`append(to:askingApp:)`), so a reply or log line needs no `String` of its own.
enum DecisionRule: Sendable, Hashable {
    /// The built-in default of a setting (`RuleSetting.builtinRule`): a built-in list's
    /// entries share it.
    case builtin(RuleSetting)
    /// One of the engine's own rules, which no setting supplies.
    case fixed(FixedRule)
    /// A setting of `defaults`, or entry `entry` of its list (`-1`: the setting itself).
    case defaults(RuleSetting, entry: Int32)
    /// A setting of the asking app's entry `apps[app]`, or entry `entry` of its list; `form` is
    /// how the id is written as a key, found once per app when the policy is compiled.
    case app(RuleSetting, entry: Int32, form: AppKeyForm)

    /// The rule of `setting` supplied by `layer` for the asking app, whose id is written as `form`.
    @inline(__always)
    init(_ layer: RuleLayer, _ setting: RuleSetting, entry: Int = -1, form: AppKeyForm) {
        switch layer {
        case .builtin: self = .builtin(setting)
        case .defaults: self = .defaults(setting, entry: Int32(entry))
        case .app: self = .app(setting, entry: Int32(entry), form: form)
        }
    }

    /// `apps["com.example.notes"].dlp.fileExport.deny[2]`, exactly as `JSONPath` renders it,
    /// for the asking app `app`.
    func text(askingApp app: AppID) -> String {
        if let text = fixedText { return text }
        let (form, count) = layout(app)
        return String(unsafeUninitializedCapacity: count) { buffer in
            var writer = ByteWriter(buffer: UnsafeMutableRawBufferPointer(buffer))
            render(into: &writer, app: app, form: form, json: false)
            return writer.count
        }
    }

    /// The length of `text(askingApp:)` in UTF-8 bytes, without rendering it.
    func byteCount(askingApp app: AppID) -> Int { layout(app).count }

    /// Appends `text(askingApp:)`'s UTF-8 bytes to `out`, rendered in place in its spare capacity.
    func append(to out: inout [UInt8], askingApp app: AppID) {
        let (form, room) = room(app)
        out.appendWriting(room) { render(into: &$0, app: app, form: form, json: false) }
    }

    /// The length of `text(askingApp:)` as a JSON string, quotes included, when
    /// `renderJSON(into:askingApp:)` can write it; nil when it holds bytes to escape, which
    /// `JSONValue.writeString` writes. The parts of a `defaults` rule, an identifier and an id
    /// in its quoted form hold none (see `keyForm(of:)`), so the quotes of `apps["…"]` are the
    /// only escapes and are written as `\"`; the built-in rules hold none
    /// (`DecisionAnswerTests`); an id in its escaped form is rare.
    func jsonByteCount(askingApp app: AppID) -> Int? {
        switch self {
        case .builtin, .fixed, .defaults:
            return layout(app).count + 2
        case .app(_, _, let form):
            return form == .escaped ? nil : layout(app).count + (form == .quoted ? 4 : 2)
        }
    }

    /// Writes `text(askingApp:)` as a JSON string into `writer`, which has room for
    /// `jsonByteCount(askingApp:)` bytes (not nil) more.
    func renderJSON(into writer: inout ByteWriter, askingApp app: AppID) {
        let form = if case .app(_, _, let form) = self { form } else { AppKeyForm.identifier }
        render(into: &writer, app: app, form: form, json: true)
    }

    /// Appends `text(askingApp:)` as a JSON string, byte for byte as `JSONValue.writeString`
    /// writes it, without making the `String` when it can (`jsonByteCount(askingApp:)`).
    func appendJSON(to out: inout [UInt8], askingApp app: AppID) {
        guard let count = jsonByteCount(askingApp: app) else { return JSONValue.writeString(text(askingApp: app), to: &out) }
        out.appendWriting(count) { renderJSON(into: &$0, askingApp: app) }
    }

    /// How an app rule writes its id, and room for `text`: for a rule rendered from its parts,
    /// room for the longest suffix and entry, which costs less than measuring them (`layout`).
    private func room(_ app: AppID) -> (form: AppKeyForm, count: Int) {
        switch self {
        case .app(_, _, let form) where form != .escaped:
            return (form, 8 + app.utf8.count + Self.longestSuffix + Self.longestEntry)
        case .defaults:
            return (.identifier, Self.defaultsPrefix.utf8CodeUnitCount + Self.longestSuffix + Self.longestEntry)
        default:
            return layout(app)
        }
    }

    /// The longest `RuleSetting.suffix` (`.compliance.offlineGraceSeconds`) and entry
    /// (`[2147483647]`) in bytes.
    static let longestSuffix = 31, longestEntry = 12

    /// How an app rule writes its id, and the length of `text`.
    private func layout(_ app: AppID) -> (form: AppKeyForm, count: Int) {
        switch self {
        case .builtin, .fixed:
            return (.identifier, fixedText!.utf8.count)
        case .defaults(let setting, let entry):
            return (.identifier, Self.defaultsPrefix.utf8CodeUnitCount + setting.suffix.utf8CodeUnitCount + Self.entryByteCount(entry))
        case .app(let setting, let entry, let form):
            return (form, Self.appKeyByteCount(app, form) + setting.suffix.utf8CodeUnitCount + Self.entryByteCount(entry))
        }
    }

    /// Writes `text` into `writer`, which has room for `byteCount` bytes more. `form` is how
    /// an app rule writes the id `app` (both ignored otherwise). With `json`, `text` as a JSON
    /// string (`jsonByteCount`, not nil, bytes).
    @inline(__always)
    private func render(into writer: inout ByteWriter, app: AppID, form: AppKeyForm, json: Bool) {
        let quote: StaticString = "\""
        if json { writer.write(quote) }
        switch self {
        case .builtin, .fixed: writer.write(fixedText!)
        case .defaults(let setting, let entry):
            writer.write(Self.defaultsPrefix)
            writer.write(setting.suffix)
            writer.writeEntry(entry)
        case .app(let setting, let entry, _):
            switch form {
            case .identifier:
                writer.write("apps." as StaticString)
                writer.write(app)
            case .quoted:
                writer.write(json ? #"apps[\""# as StaticString : #"apps[""#)
                writer.write(app)
                writer.write(json ? #"\"]"# as StaticString : #""]"#)
            case .escaped:
                writer.write(JSONPath([.key("apps"), .key(app)]).description)
            }
            writer.write(setting.suffix)
            writer.writeEntry(entry)
        }
        if json { writer.write(quote) }
    }

    /// The text of a built-in or fixed rule; nil for one rendered from its parts.
    private var fixedText: String? {
        switch self {
        case .builtin(let setting): setting.builtinRule
        case .fixed(let rule): rule.text
        case .defaults, .app: nil
        }
    }

    private static let defaultsPrefix: StaticString = "defaults"

    /// How `JSONPath` writes `app` as a key (one pass over its bytes).
    static func keyForm(of app: AppID) -> AppKeyForm {
        AppTable.withBytes(of: app) { bytes in
            guard let first = bytes.first else { return .quoted }
            // Unsigned range checks: a letter is `(b | 0x20) - "a" < 26`, a digit `b - "0" < 10`.
            var identifier = first == UInt8(ascii: "_") || (first | 0x20) &- UInt8(ascii: "a") < 26
            for byte in bytes {
                if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return .escaped }
                identifier = identifier && (byte == UInt8(ascii: "_") || (byte | 0x20) &- UInt8(ascii: "a") < 26
                                            || byte &- UInt8(ascii: "0") < 10)
            }
            return identifier ? .identifier : .quoted
        }
    }

    /// The bytes of `apps.<id>`, `apps["<id>"]` or the escaped form.
    private static func appKeyByteCount(_ app: AppID, _ form: AppKeyForm) -> Int {
        switch form {
        case .identifier: 5 + app.utf8.count
        case .quoted: 8 + app.utf8.count
        case .escaped: JSONPath([.key("apps"), .key(app)]).description.utf8.count
        }
    }

    /// `[n]` for a list entry, nothing for the setting itself (`-1`).
    private static func entryByteCount(_ entry: Int32) -> Int {
        guard entry >= 0 else { return 0 }
        var digits = 1
        var rest = entry / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        return digits + 2
    }
}

/// The engine's own rules, which no setting supplies (`BuiltinDefaults.Rule`).
enum FixedRule: UInt8, Sendable, CaseIterable {
    case unknownApp, sameApp, fileExportRelativePath, fileExportPathTooLong, notificationTarget

    var text: String { Self.texts[Int(rawValue)] }

    /// In the order of the cases (`DecisionAnswerTests` checks each text).
    private static let texts = [BuiltinDefaults.Rule.unknownApp, BuiltinDefaults.Rule.sameApp,
                                BuiltinDefaults.Rule.fileExportRelativePath, BuiltinDefaults.Rule.fileExportPathTooLong,
                                BuiltinDefaults.Rule.notificationTarget]
}

/// How `JSONPath` writes an app id as a key: `apps.notes` (an identifier), `apps["com.x"]`
/// (quoted as is), or through JSON escapes (rare: quotes, backslashes, control characters),
/// which `JSONPath` itself renders. Kept per app in the compiled policy's hash slot.
enum AppKeyForm: UInt8, Sendable {
    case identifier, quoted, escaped
}

extension ByteWriter {
    /// `[n]`, or nothing for `-1`.
    mutating func writeEntry(_ entry: Int32) {
        guard entry >= 0 else { return }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { scratch in
            var end = scratch.count
            end -= 1
            scratch[end] = UInt8(ascii: "]")
            var rest = entry
            repeat {
                end -= 1
                scratch[end] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            end -= 1
            scratch[end] = UInt8(ascii: "[")
            write(UnsafeRawBufferPointer(rebasing: scratch[end...]))
        }
    }
}

extension [UInt8] {
    /// Appends the bytes, at most `count`, that `body` writes in place into this array's
    /// spare capacity: no buffer of its own, where rendering on the stack and then appending
    /// cost a second copy and `append(contentsOf:)`'s generic path (≈ 95 instructions).
    @inline(__always)
    mutating func appendWriting(_ count: Int, _ body: (inout ByteWriter) -> Void) {
        append(addingCapacity: count) { (span: inout OutputSpan<UInt8>) in
            span.withUnsafeMutableBufferPointer { buffer, initialized in
                var writer = ByteWriter(buffer: UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[initialized...])))
                body(&writer)
                initialized += writer.count
            }
        }
    }
}
