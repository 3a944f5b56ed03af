public import JSONCore

/// One parsed and validated policy file. Unlike a `Policy` it may leave out `version`: a
/// drop-in in `policy.d` that only adds an app need not name the whole policy's version.
/// Fragments become a policy through `Policy.merge`.
public struct PolicyFragment: Sendable, Hashable {
    /// The file this came from, carried into problems found while merging.
    public var source: String?
    public var version: String?
    public var defaults: AppSettings
    public var apps: [AppID: AppPolicy]

    public init(source: String? = nil, version: String? = nil, defaults: AppSettings = AppSettings(),
                apps: [AppID: AppPolicy] = [:]) {
        self.source = source
        self.version = version
        self.defaults = defaults
        self.apps = apps
    }

    /// Parses and validates one policy file of schema 1.
    ///
    /// - Parameters:
    ///   - bytes: the file's contents, UTF-8 JSON of at most `PolicyLimits.maxDocumentBytes`.
    ///   - source: the file name to put in problems, or nil.
    /// - Throws: every problem in the document at once, in document order. Malformed JSON
    ///   is a single problem at the place the parser stopped.
    public static func parse(_ bytes: [UInt8], source: String?) throws(PolicyProblems) -> PolicyFragment {
        try parse(bytes, source: source, splitting: false)
    }

    /// `parse(_:source:)`; `splitting`: a large document's apps are read on two threads
    /// (for a caller that parses nothing else meanwhile).
    static func parse(_ bytes: [UInt8], source: String?, splitting: Bool) throws(PolicyProblems) -> PolicyFragment {
        guard bytes.count <= PolicyLimits.maxDocumentBytes else {
            throw PolicyProblems([PolicyProblem(
                source: source, location: SourceLocation(line: 1, column: 1),
                message: "found a document of \(bytes.count) bytes, expected at most "
                    + "\(PolicyLimits.describe(bytes: PolicyLimits.maxDocumentBytes)), PolicyLimits.maxDocumentBytes")])
        }
        // Nearly every document is valid: read it straight into the model, and only when
        // that gives up parse it again to find its problems.
        if let fragment = PolicyFastReader.read(bytes, source: source, splitting: splitting) { return fragment }
        let root: JSONValue
        do {
            root = try JSONParser.parse(bytes, maxDepth: PolicyLimits.maxNestingDepth)
        } catch {
            throw PolicyProblems([syntaxProblem(bytes, source: source)])
        }
        return try read(root, source: source, bytes: bytes)
    }

    /// Validates a document already parsed, with at most `PolicyLimits.maxNestingDepth`
    /// levels, such as the policy inside a signed bundle's payload: problems are located in
    /// `root`'s serialised form, exactly as `parse` of those bytes would locate them.
    public static func read(_ root: JSONValue, source: String?) throws(PolicyProblems) -> PolicyFragment {
        try read(root, source: source, bytes: nil)
    }

    /// `bytes`: the document `root` was parsed from, or nil to serialise `root` only when a
    /// problem needs locating.
    private static func read(_ root: JSONValue, source: String?, bytes: [UInt8]?) throws(PolicyProblems) -> PolicyFragment {
        var reader = PolicyReader(root: root, source: source)
        let fragment = reader.readFragment()
        guard reader.problems.isEmpty else {
            // Only now find where things are: parsing with positions costs several times more.
            guard let document = try? JSONParser.parseDocument(bytes ?? root.serialized(), maxDepth: PolicyLimits.maxNestingDepth) else {
                preconditionFailure("a document that parsed once failed to parse again")
            }
            throw PolicyProblems(reader.locate(in: document))
        }
        return fragment
    }

    /// The syntax error of a document that does not parse, with the path the parser had reached.
    private static func syntaxProblem(_ bytes: [UInt8], source: String?) -> PolicyProblem {
        // Something else entirely, such as a binary or a secret a link in policy.d points
        // at (read with proctord's privileges): say so without quoting any of it.
        let start = bytes.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        guard start.first == UInt8(ascii: "{") else {
            return PolicyProblem(source: source, location: SourceLocation(line: 1, column: 1),
                                 message: "not a policy file: a policy is a JSON object, which starts with {")
        }
        guard let error = JSONParser.syntaxError(in: bytes, maxDepth: PolicyLimits.maxNestingDepth) else {
            preconditionFailure("a document that failed to parse parsed the second time")
        }
        return PolicyProblem(source: source, path: error.path, location: error.location, message: "invalid JSON: \(error.message)")
    }
}

extension Policy {
    /// Parses a complete policy document: one that says its `version`, such as a bundle
    /// pushed through the Admin interface.
    ///
    /// - Throws: every problem at once; a missing `version` is one of them.
    public static func parse(_ bytes: [UInt8], source: String?) throws(PolicyProblems) -> Policy {
        try complete(PolicyFragment.parse(bytes, source: source), source: source)
    }

    /// A complete policy from a document already parsed (`PolicyFragment.read`).
    public static func read(_ root: JSONValue, source: String?) throws(PolicyProblems) -> Policy {
        try complete(PolicyFragment.read(root, source: source), source: source)
    }

    /// The complete policy that comes next in `json`, read without a `JSONValue` tree, when
    /// it is valid; nil when it is not (or `PolicyFastReader` gives up), and then `json` is
    /// somewhere inside it: parse the document again and `read` the policy for its problems.
    public static func readIfValid(_ json: inout JSONPullReader) -> Policy? {
        PolicyFastReader.readPolicy(&json)
    }

    private static func complete(_ fragment: PolicyFragment, source: String?) throws(PolicyProblems) -> Policy {
        guard let version = fragment.version else {
            throw PolicyProblems([PolicyProblem(
                source: source, path: JSONPath.root.appending("version"), location: SourceLocation(line: 1, column: 1),
                message: "missing \"version\": a complete policy names its version, such as \"2026-11-29.1\"")])
        }
        return Policy(version: version, defaults: fragment.defaults, apps: fragment.apps)
    }
}
