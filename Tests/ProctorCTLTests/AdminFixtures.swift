import JSONCore
import ProctorPolicy
import Varlink

/// Canned, interface-conforming replies of proctord for the online verbs.
enum AdminFixtures {
    static var examplesPath: String { repositoryRoot.path + "/config/examples" }

    /// The example policy directory as proctord would hold it.
    static func examplePolicy() throws -> Policy { try PolicyDirectory.load(examplesPath).policy }

    static func policyInfo(_ policy: Policy) -> JSONValue {
        ["version": .string(policy.version), "sha256": .string(policy.sha256),
         "sources": ["/etc/proctor/policy.d/00-defaults.json", "/etc/proctor/policy.d/10-notes.json"],
         "loadedAt": "2026-11-29T12:00:01Z"]
    }

    static func status(_ policy: Policy) -> [String: JSONValue] {
        ["version": "0.1.0", "startedAt": "2026-11-29T12:00:00Z", "uptimeSeconds": 7384.5,
         "policy": policyInfo(policy),
         "lastReload": ["at": "2026-11-29T13:30:00.250Z", "ok": false, "problems": [
             ["path": "apps[\"com.example.mail\"].dlp.print", "message": "found \"maybe\", expected \"allow\" or \"block\""],
         ]],
         "counts": ["appsKnown": 5, "appsConnected": 1, "sessions": 3, "decisionsAllowed": 120, "decisionsDenied": 7,
                    "decisions": [["action": "launch", "allowed": 100, "denied": 2], ["action": "print", "allowed": 20, "denied": 5]],
                    "registrationsRefused": [["reason": "unknown-app", "count": 4], ["reason": "identity-mismatch", "count": 1]],
                    "logMessagesDropped": 2, "logSinkFailures": 3, "storageFailures": 1, "eventsDropped": 9],
         "fleet": ["bundleUrl": "https://mdm.example.com/proctor/bundle", "requireSignedBundles": true,
                   "trustedKeys": ["16eaf512099e5edb"], "lastAppliedSerial": 1796047606,
                   "lastAppliedAt": "2026-11-29T12:10:00Z", "lastFetchAt": "2026-11-29T14:00:00Z",
                   "lastSuccessfulFetchAt": "2026-11-29T13:55:00Z", "lastFetchResult": "failed",
                   "nextFetchAt": "2026-11-29T14:00:30Z",
                   "lastError": ["at": "2026-11-29T14:00:00Z", "reason": "unreachable",
                                 "message": "cannot reach the server: Failed to connect to mdm.example.com port 443"],
                   "fetchFailures": 1, "bundlesRefused": 2,
                   "statusReports": ["statusUrl": "https://mdm.example.com/proctor/status",
                                     "lastReportAt": "2026-11-29T14:00:01Z", "lastReportResult": "sent",
                                     "lastReportError": ["at": "2026-11-29T13:00:01Z", "reason": "timed-out",
                                                         "message": "timed out: Operation timed out after 120001 milliseconds"],
                                     "reportsSent": 41, "reportFailures": 1]]]
    }

    static let apps: [String: JSONValue] = ["apps": [
        ["appId": "io.proctor.demo.notes", "inPolicy": true, "state": "authorized", "connectedSessions": 2,
         "lastSeen": "2026-11-29T13:59:58Z", "version": "1.4.0"],
        ["appId": "com.example.legacy", "inPolicy": false, "state": nil, "connectedSessions": 0, "lastSeen": nil, "version": nil],
        ["appId": "com.example.mail", "inPolicy": true, "state": "blocked", "connectedSessions": 0,
         "lastSeen": "2026-11-28T23:15:00Z"],
    ]]

    static let app: [String: JSONValue] = ["app": [
        "appId": "io.proctor.demo.notes", "inPolicy": true, "state": "authorized", "policyVersion": "2026-11-29.3",
        "complianceState": ["compliant": false,
                            "reason": "The app's version is below compliance.minVersion and onViolation is block."],
        "sessions": [
            ["id": "s-7f3a", "pid": 4242, "uid": 1000, "executable": "/usr/local/bin/proctor-demo",
             "registeredAt": "2026-11-29T13:00:00Z", "subscribed": true,
             "fileExportEnforcement": ["mode": "kernel", "landlockABI": 7, "at": "2026-11-29T13:00:01Z"]],
            ["id": "s-91c0", "pid": 5150, "uid": 1001, "executable": "/usr/local/bin/proctor-demo",
             "registeredAt": "2026-11-29T13:45:10Z", "subscribed": false,
             "fileExportEnforcement": ["mode": "advisory", "reason": "the kernel has no Landlock: Function not implemented (errno 38)",
                                       "at": "2026-11-29T13:45:11Z"]],
        ],
        "lastRegistration": ["at": "2026-11-29T13:45:10Z", "version": "1.4.0", "pid": 5150, "uid": 1001],
        "lastEvent": ["at": "2026-11-29T13:59:58Z", "event": "didBecomeActive"],
        "config": ["serverURL": "https://notes.example.com", "syncDays": 14],
        "dlp": ["clipboard": ["level": "managed-paste-in", "charLimit": 40], "print": "block"],
        "compliance": [:],
        "feedback": [
            ["key": "policy", "severity": "info", "message": "applied 2026-11-29.2", "data": nil,
             "at": "2026-11-29T13:45:11Z"],
        ],
        "acknowledgements": [
            ["policyVersion": "2026-11-29.2", "status": "applied", "at": "2026-11-29T13:45:11Z"],
            ["policyVersion": "2026-11-29.1", "status": "unsupported", "at": "2026-11-28T09:31:00Z"],
        ],
        "wipes": [
            ["id": "w-1", "issuedAt": "2026-11-29T13:50:00Z", "issuedByUid": 0, "state": "completed",
             "deliveredAt": "2026-11-29T13:50:00Z", "completedAt": "2026-11-29T13:50:02Z"],
            ["id": "w-2", "issuedAt": "2026-11-29T13:58:00Z", "issuedByUid": 0, "state": "issued", "deliveredAt": nil,
             "completedAt": nil],
        ],
        "dataKeys": [
            ["uid": 1000, "generation": 2, "keyId": "9419e6e3ee3b3398", "createdAt": "2026-11-29T13:58:05Z",
             "lastReleasedAt": "2026-11-29T13:59:58Z"],
            ["uid": 1000, "generation": 1, "keyId": "329f6587b52d2734", "createdAt": "2026-11-20T08:00:00Z",
             "lastReleasedAt": "2026-11-29T13:45:10Z", "destroyedAt": "2026-11-29T13:58:00Z"],
        ],
    ]]

    static let history: [String: JSONValue] = ["entries": [
        ["version": "2026-11-29.2", "sha256": .string(String(repeating: "b", count: 64)), "appliedAt": "2026-11-29T13:00:00Z",
         "appliedByUid": 0, "kind": "rollback", "current": true],
        ["version": "2026-11-29.1", "sha256": .string(String(repeating: "a", count: 64)), "appliedAt": "2026-11-28T09:30:00Z",
         "appliedByUid": nil, "kind": "apply", "current": false],
    ]]

    static func decide(allowed: Bool) -> [String: JSONValue] {
        ["allowed": .bool(allowed), "rule": "apps[\"io.proctor.demo.notes\"].dlp.clipboard.level",
         "reason": allowed ? "The destination is a managed app." : "The destination is not a managed app.",
         "explanation": ["io.proctor.demo.notes is managed (authorized in policy).",
                         "clipboard.level is managed-paste-in: copies go to managed apps only."]]
    }

    static let events: [[String: JSONValue]] = [
        ["id": 4, "occurredAt": "2026-11-29T14:00:00Z", "receivedAt": "2026-11-29T14:00:00Z", "at": "2026-11-29T14:00:00Z", "kind": "decision", "appId": "io.proctor.demo.notes",
         "data": ["action": "print", "allowed": false, "rule": "apps[\"io.proctor.demo.notes\"].dlp.print",
                  "reason": "Printing is blocked."]],
        ["id": 5, "occurredAt": "2026-11-29T14:00:01Z", "receivedAt": "2026-11-29T14:00:01Z", "at": "2026-11-29T14:00:01Z", "kind": "policy", "appId": nil, "data": ["version": "2026-11-29.3"]],
        ["id": 6, "occurredAt": "2026-11-29T14:00:02Z", "receivedAt": "2026-11-29T14:00:02Z", "at": "2026-11-29T14:00:02Z", "kind": "lifecycle", "appId": "io.proctor.demo.notes",
         "data": ["event": "willResignActive"]],
    ]

    static func unknownApp(_ id: String) -> VarlinkError {
        VarlinkError(name: "io.proctor.Admin.UnknownApp", parameters: ["appId": .string(id)])
    }
}
