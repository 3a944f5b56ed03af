public import JSONCore

/// The engine's answer, always naming what decided it.
public struct Decision: Sendable, Hashable {
    public var allowed: Bool
    /// The JSON path of the setting that decided (`apps["com.example.notes"].dlp.clipboard.level`,
    /// `defaults.dlp.fileExport.deny[1]`), or `builtin.<name>` for a built-in default or rule
    /// (see `BuiltinDefaults.Rule`).
    public var rule: String
    /// One sentence an administrator can read.
    public var reason: String
    /// Set on a `launch` that fails `compliance.minVersion`: what the app must do
    /// (`warn` comes with `allowed == true`, `block` and `wipe` with `false`).
    public var violation: Violation?

    public init(allowed: Bool, rule: String, reason: String, violation: Violation? = nil) {
        self.allowed = allowed
        self.rule = rule
        self.reason = reason
        self.violation = violation
    }

    /// `{"allowed": …, "rule": …, "reason": …}`, plus `"violation"` when there is one.
    public var json: JSONValue {
        var members: [String: JSONValue] = ["allowed": .bool(allowed), "rule": .string(rule), "reason": .string(reason)]
        if let violation { members["violation"] = .string(violation.rawValue) }
        return .object(members)
    }
}
