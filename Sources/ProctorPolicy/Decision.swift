public import JSONCore

/// The engine's answer, always naming what decided it.
public struct Decision: Sendable, Hashable {
    public var allowed: Bool
    /// The JSON path of the setting that decided (`apps["com.example.notes"].dlp.clipboard.level`,
    /// `defaults.dlp.fileExport.deny[1]`), or `builtin.<name>` for a built-in default or rule
    /// (see `BuiltinDefaults.Rule`). Rendered when read: the engine keeps the parts.
    public var rule: String {
        get { ruleParts.text }
        set { ruleParts = .text(newValue) }
    }
    private var ruleParts: RuleText

    /// One sentence an administrator can read. The engine's are kept as a `DecisionReason`.
    public var reason: String {
        get { reasonParts.text }
        set { reasonParts = .text(newValue) }
    }
    private var reasonParts: ReasonText
    /// Set on a `launch` that fails `compliance.minVersion`: what the app must do
    /// (`warn` comes with `allowed == true`, `block` and `wipe` with `false`).
    public var violation: Violation?

    public init(allowed: Bool, rule: String, reason: String, violation: Violation? = nil) {
        self.allowed = allowed
        ruleParts = .text(rule)
        reasonParts = .text(reason)
        self.violation = violation
    }

    /// The engine's `decision` for the app `askingApp`, which asked for it.
    public init(_ decision: EngineDecision, askingApp: AppID) {
        allowed = decision.allowed
        ruleParts = .engine(decision.rule, askingApp: askingApp)
        reasonParts = .sentence(decision.reason)
        violation = decision.violation
    }

    // Equal decisions are equal in what they say, however their rule is kept.
    public static func == (lhs: Decision, rhs: Decision) -> Bool {
        lhs.allowed == rhs.allowed && lhs.rule == rhs.rule && lhs.reason == rhs.reason && lhs.violation == rhs.violation
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(allowed)
        hasher.combine(rule)
        hasher.combine(reason)
        hasher.combine(violation)
    }

    /// `{"allowed": …, "rule": …, "reason": …}`, plus `"violation"` when there is one.
    public var json: JSONValue {
        var members: [String: JSONValue] = ["allowed": .bool(allowed), "rule": .string(rule), "reason": .string(reason)]
        if let violation { members["violation"] = .string(violation.rawValue) }
        return .object(members)
    }

    /// A decision's rule: the engine's parts and the app that asked, or a caller's text.
    private enum RuleText: Sendable {
        case engine(DecisionRule, askingApp: AppID)
        case text(String)

        var text: String {
            switch self {
            case .engine(let rule, let app): rule.text(askingApp: app)
            case .text(let text): text
            }
        }
    }

    /// A decision's reason: one of the engine's sentences, or a caller's text.
    private enum ReasonText: Sendable {
        case sentence(DecisionReason)
        case text(String)

        var text: String {
            switch self {
            case .sentence(let reason): reason.text
            case .text(let text): text
            }
        }
    }
}

/// A decision as the engine makes it, before it is told which app asked: its rule is kept as
/// parts, an app-layer rule named by setting and entry only, and rendered with the asking app's
/// id, which whoever asked holds anyway (the request; proctord's session). It holds no reference,
/// so making, copying and dropping one costs no reference counting: a `Decision`, which keeps the
/// id, retained and released the id's string for each decision (two atomic operations, on a line
/// of memory each app has its own of). `Decision(_:askingApp:)` makes the self-contained form.
public struct EngineDecision: Sendable, Hashable {
    public let allowed: Bool
    let rule: DecisionRule
    let reason: DecisionReason
    /// As `Decision.violation`.
    public let violation: Violation?

    init(allowed: Bool, rule: DecisionRule, reason: DecisionReason, violation: Violation? = nil) {
        self.allowed = allowed
        self.rule = rule
        self.reason = reason
        self.violation = violation
    }

    /// `Decision.rule` for the asking app `app`.
    public func rule(askingApp app: AppID) -> String { rule.text(askingApp: app) }

    /// `Decision.reason`.
    public var reasonText: String { reason.text }

    /// Appends `rule(askingApp:)`'s UTF-8 bytes to `out` without making a `String`: what a reply or
    /// log writer needs, rendered in place in `out`'s spare capacity.
    public func appendRule(to out: inout [UInt8], askingApp app: AppID) { rule.append(to: &out, askingApp: app) }

    /// `rule(askingApp:).utf8.count`, without rendering it.
    public func ruleByteCount(askingApp app: AppID) -> Int { rule.byteCount(askingApp: app) }

    /// Appends `before`, `{"allowed":…,"reason":"…","rule":"…"}` (the decision as an app's
    /// `Decide` is answered, no violation, byte for byte as `JSONValue.object(_:).write(to:)`
    /// writes `Decision(self, askingApp: app).json` without it) and `after`, in one copy: the
    /// envelope of the message that carries it (`Agent.Decide.DirectReply` writes the whole
    /// Varlink reply so). Nothing is made a `String` or escaped: the reason is copied as the JSON
    /// it was escaped to once (`DecisionReason.json`), the rule rendered as JSON from its parts,
    /// both into one buffer on the stack.
    public func writeAnswer(to out: inout [UInt8], askingApp app: AppID, between before: StaticString = "",
                            and after: StaticString = "") {
        let opening: StaticString = allowed ? #"{"allowed":true,"reason":"# : #"{"allowed":false,"reason":"#
        let ruleKey: StaticString = #","rule":"#
        let reasonJSON = reason.json
        guard let ruleCount = rule.jsonByteCount(askingApp: app) else {
            // An id with bytes to escape (rare).
            out.append(utf8: before)
            out.append(utf8: opening)
            out.append(contentsOf: reasonJSON)
            out.append(utf8: ruleKey)
            rule.appendJSON(to: &out, askingApp: app)
            out.append(UInt8(ascii: "}"))
            return out.append(utf8: after)
        }
        let count = before.utf8CodeUnitCount + opening.utf8CodeUnitCount + reasonJSON.count + ruleKey.utf8CodeUnitCount
            + ruleCount + 1 + after.utf8CodeUnitCount
        withUnsafeTemporaryAllocation(byteCount: count, alignment: 1) { buffer in
            var writer = ByteWriter(buffer: buffer)
            writer.write(before)
            writer.write(opening)
            writer.write(reasonJSON)
            writer.write(ruleKey)
            rule.renderJSON(into: &writer, askingApp: app)
            writer.write("}" as StaticString)
            writer.write(after)
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[..<writer.count]))
        }
    }
}
