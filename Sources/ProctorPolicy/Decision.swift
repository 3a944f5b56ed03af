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
    var ruleParts: DecisionRule

    /// Appends `rule`'s UTF-8 bytes to `out` without making a `String`: what a reply or log
    /// writer needs, at the cost of copying the parts.
    public func appendRule(to out: inout [UInt8]) { ruleParts.append(to: &out) }

    /// `rule.utf8.count`, without rendering it.
    public var ruleByteCount: Int { ruleParts.byteCount }
    /// One sentence an administrator can read. The engine's are kept as a `DecisionReason`.
    public var reason: String {
        get { reasonParts.text }
        set { reasonParts = .text(newValue) }
    }
    var reasonParts: ReasonText
    /// Set on a `launch` that fails `compliance.minVersion`: what the app must do
    /// (`warn` comes with `allowed == true`, `block` and `wipe` with `false`).
    public var violation: Violation?

    public init(allowed: Bool, rule: String, reason: String, violation: Violation? = nil) {
        self.init(allowed: allowed, ruleParts: .text(rule), reasonParts: .text(reason), violation: violation)
    }

    /// The engine's decision, named by the parts it has at hand.
    init(allowed: Bool, ruleParts: DecisionRule, reason: DecisionReason, violation: Violation? = nil) {
        self.init(allowed: allowed, ruleParts: ruleParts, reasonParts: .sentence(reason), violation: violation)
    }

    private init(allowed: Bool, ruleParts: DecisionRule, reasonParts: ReasonText, violation: Violation?) {
        self.allowed = allowed
        self.ruleParts = ruleParts
        self.reasonParts = reasonParts
        self.violation = violation
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

    /// Appends `{"allowed":…,"reason":"…","rule":"…"}`, the decision as an app's `Decide` is
    /// answered (no violation), byte for byte as `JSONValue.object(_:).write(to:)` writes it.
    /// An engine's decision makes no `String` and escapes nothing: its reason is copied as the
    /// JSON it was escaped to once (`DecisionReason.json`), its rule rendered as JSON from its
    /// parts, both into one buffer on the stack, appended with one copy.
    public func writeAnswer(to out: inout [UInt8]) { writeAnswer(to: &out, between: "", and: "") }

    /// `writeAnswer(to:)` with `before` and `after` around the answer, in the same one copy:
    /// the envelope of the message that carries it (`Agent.Decide.DirectReply` writes the
    /// whole Varlink reply so, instead of appending the envelope's two parts on their own).
    public func writeAnswer(to out: inout [UInt8], between before: StaticString, and after: StaticString) {
        let opening: StaticString = allowed ? #"{"allowed":true,"reason":"# : #"{"allowed":false,"reason":"#
        let ruleKey: StaticString = #","rule":"#
        guard case .sentence(let reason) = reasonParts, let ruleCount = ruleParts.jsonByteCount else {
            // A caller's text, or a rule with bytes to escape.
            out.append(utf8: before)
            out.append(utf8: opening)
            JSONValue.writeString(self.reason, to: &out)
            out.append(utf8: ruleKey)
            ruleParts.appendJSON(to: &out)
            out.append(UInt8(ascii: "}"))
            return out.append(utf8: after)
        }
        let reasonJSON = reason.json
        let count = before.utf8CodeUnitCount + opening.utf8CodeUnitCount + reasonJSON.count + ruleKey.utf8CodeUnitCount
            + ruleCount + 1 + after.utf8CodeUnitCount
        Self.withBuffer(of: count, rule: ruleParts) { buffer, rule in
            var writer = ByteWriter(buffer: buffer)
            writer.write(before)
            writer.write(opening)
            writer.write(reasonJSON)
            writer.write(ruleKey)
            rule.renderJSON(into: &writer)
            writer.write("}" as StaticString)
            writer.write(after)
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[..<writer.count]))
        }
    }

    /// A buffer of `count` bytes on the stack; `rule` is passed on rather than captured, which
    /// made the closure copy the whole decision.
    @inline(__always)
    private static func withBuffer(of count: Int, rule: DecisionRule,
                                   _ body: (UnsafeMutableRawBufferPointer, DecisionRule) -> Void) {
        withUnsafeTemporaryAllocation(byteCount: count, alignment: 1) { body($0, rule) }
    }
}

/// A decision's reason: one of the engine's sentences, or what a caller gave `Decision.init`.
enum ReasonText: Sendable {
    case sentence(DecisionReason)
    case text(String)

    var text: String {
        switch self {
        case .sentence(let reason): reason.text
        case .text(let text): text
        }
    }
}
