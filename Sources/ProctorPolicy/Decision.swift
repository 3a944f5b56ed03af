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
    /// One sentence an administrator can read.
    public var reason: String
    /// Set on a `launch` that fails `compliance.minVersion`: what the app must do
    /// (`warn` comes with `allowed == true`, `block` and `wipe` with `false`).
    public var violation: Violation?

    public init(allowed: Bool, rule: String, reason: String, violation: Violation? = nil) {
        self.init(allowed: allowed, ruleParts: .text(rule), reason: reason, violation: violation)
    }

    init(allowed: Bool, ruleParts: DecisionRule, reason: String, violation: Violation? = nil) {
        self.allowed = allowed
        self.ruleParts = ruleParts
        self.reason = reason
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
}
