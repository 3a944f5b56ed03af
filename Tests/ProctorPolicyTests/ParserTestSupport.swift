import JSONCore
import ProctorPolicy

/// Helpers shared by the parser, merge and canonical-form tests.
enum PolicyTestSupport {
    /// A complete, valid policy: defaults and one app with config, DLP and compliance settings.
    static let notesPolicy = """
    {
      "schema": 1,
      "version": "2026-11-29.1",
      "defaults": { "dlp": { "clipboard": { "level": "managed", "charLimit": 0 } } },
      "apps": {
        "com.example.notes": {
          "state": "authorized",
          "match": { "executable": "/usr/bin/example-notes", "users": ["*"] },
          "config": { "serverURL": "https://notes.example.com", "syncDays": 14 },
          "dlp": {
            "clipboard": { "level": "managed-paste-in", "charLimit": 40 },
            "share": { "send": "managed", "receive": "any", "exempt": ["com.example.*"] },
            "print": "block",
            "screenCapture": "allow",
            "fileExport": { "allow": ["/home/*/Documents/Work/**"], "deny": ["/tmp/**"] },
            "notifications": "block-org-data"
          },
          "compliance": { "minVersion": "2.3.0", "onViolation": "warn", "offlineGraceSeconds": 86400 }
        }
      }
    }
    """

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
