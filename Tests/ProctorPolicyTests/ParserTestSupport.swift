import JSONCore
import ProctorPolicy

/// Helpers shared by the parser, merge and canonical-form tests.
enum PolicyTestSupport {
    /// The problems of parsing `text` as one file named `source`; empty when it is valid.
    static func problems(_ text: String, source: String? = "test.json") -> [PolicyProblem] {
        do {
            _ = try PolicyFragment.parse(Array(text.utf8), source: source)
            return []
        } catch {
            return error.problems
        }
    }

    static func fragment(_ text: String, source: String? = "test.json") throws -> PolicyFragment {
        try PolicyFragment.parse(Array(text.utf8), source: source)
    }

    static func policy(_ text: String) throws -> Policy {
        try Policy.parse(Array(text.utf8), source: nil)
    }

    /// `apps["<id>"]` followed by `rest` keys, as problems render paths.
    static func appPath(_ id: String, _ rest: String...) -> JSONPath {
        rest.reduce(JSONPath.root.appending("apps").appending(id)) { $0.appending($1) }
    }

    /// The checkout's root, found from this file's path.
    static var repositoryRoot: String {
        let file = #filePath
        let marker = "/Tests/ProctorPolicyTests/"
        return String(file[..<file.firstRange(of: marker)!.lowerBound])
    }
}
