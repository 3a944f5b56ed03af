public import JSONCore

/// One thing wrong with a policy: which file, which JSON path, where in the file, and a
/// message that says what was found and what is allowed.
///
/// `description` reads like a compiler diagnostic, so editors and terminals can jump to it:
/// `10-apps.json:7:9: apps["com.example.notes"].dlp.clipboard.level: found "managed-in",
/// expected one of "blocked", "managed", "managed-paste-in", "any"`.
public struct PolicyProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file the problem is in (its name within the policy directory), or nil for a
    /// document that came from elsewhere (a bundle sent over a socket).
    public var source: String?
    /// The JSON path of the offending value; the root path for problems of the whole document.
    public var path: JSONPath
    /// Where in the source the offending value (or key) starts, when the problem has a place.
    public var location: SourceLocation?
    /// What was found and what is allowed, in one sentence without a trailing period.
    public var message: String

    public init(source: String? = nil, path: JSONPath = .root, location: SourceLocation? = nil, message: String) {
        self.source = source
        self.path = path
        self.location = location
        self.message = message
    }

    public var description: String {
        var prefix = source ?? "<policy>"
        if let location { prefix += ":\(location.line):\(location.column)" }
        // A problem of a whole file that has no place in it (unreadable, missing) needs no path.
        if location == nil, path.components.isEmpty { return "\(prefix): \(message)" }
        return "\(prefix): \(path): \(message)"
    }

    /// `{"source","path","line","column","message"}`; `source`, `line` and `column` are
    /// null when unknown. Used by `proctorctl --json` and the Admin interface.
    public var json: JSONValue {
        [
            "source": source.map(JSONValue.string) ?? .null,
            "path": .string(path.description),
            "line": location.map { .number($0.line) } ?? .null,
            "column": location.map { .number($0.column) } ?? .null,
            "message": .string(message),
        ]
    }
}

/// Every problem found in a policy, in document order: parsing and merging report all of
/// them at once so an administrator can fix a file in one pass. Never empty when thrown.
public struct PolicyProblems: Error, Sendable, Hashable, CustomStringConvertible {
    public var problems: [PolicyProblem]

    public init(_ problems: [PolicyProblem]) { self.problems = problems }

    /// One problem per line.
    public var description: String { problems.map(\.description).joined(separator: "\n") }

    /// A JSON array of `PolicyProblem.json` objects.
    public var json: JSONValue { .array(problems.map(\.json)) }
}
