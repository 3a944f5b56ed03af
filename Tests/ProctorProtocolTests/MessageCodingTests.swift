import Foundation
import JSONCore
import ProctorPolicy
@testable import ProctorProtocol
import Testing

/// How message types are read and written through `Codable`: errors name the field by its
/// path, optionals may be absent or null and are left out when nil, unknown fields are
/// ignored, and each message's own rules are checked once it is read.
@Suite struct MessageCodingTests {
    static let counts: JSONValue = [
        "appsKnown": 1, "appsConnected": 2, "sessions": 3, "decisionsAllowed": 4, "decisionsDenied": 5,
        "decisions": [["action": "print", "allowed": 1, "denied": 2]], "registrationsRefused": [],
        "logMessagesDropped": 6, "logSinkFailures": 7, "storageFailures": 0, "eventsDropped": 8,
    ]
    static let policy: JSONValue = ["version": "v1", "sha256": "ab", "sources": ["a.json"], "loadedAt": "2026-11-29T12:00:00Z"]

    static func status(_ changes: [String: JSONValue]) -> [String: JSONValue] {
        var fields: [String: JSONValue] = ["version": "1.0", "startedAt": "2026-11-29T12:00:00Z", "uptimeSeconds": 1.5,
                                           "policy": policy, "counts": counts]
        fields.merge(changes) { _, new in new }
        return fields
    }

    @Test func aNestedFieldIsNamedByItsPathAndWhatWasFound() {
        #expect(throws: MalformedMessage(field: "policy.sources[1]", reason: "is null, expected a string")) {
            try Admin.Status.Reply(Self.status(["policy": ["version": "v1", "sha256": "ab", "sources": ["a", nil], "loadedAt": "t"]]))
        }
        #expect(throws: MalformedMessage(field: "counts.sessions", reason: "is missing, expected an integer")) {
            try Admin.Status.Reply(Self.status(["counts": ["appsKnown": 1, "appsConnected": 2]]))
        }
        #expect(throws: MalformedMessage(field: "counts.appsKnown", reason: "is a number, expected an integer")) {
            try Admin.Status.Reply(Self.status(["counts": .object(Self.counts.objectValue!.merging(["appsKnown": 1.5]) { _, new in new })]))
        }
        #expect(throws: MalformedMessage(field: "policy", reason: "is missing, expected an object")) {
            try Admin.Status.Reply(Self.status([:]).filter { $0.key != "policy" })
        }
        #expect(throws: MalformedMessage(field: "app.sessions", reason: "is an object, expected an array")) {
            try Admin.GetApp.Reply(["app": ["appId": "a", "inPolicy": true, "sessions": [:]]])
        }
        #expect(throws: MalformedMessage(field: "apps[0].state", reason: "is \"gone\", expected one of authorized, blocked, retired or null")) {
            try Admin.ListApps.Reply(["apps": [["appId": "a", "inPolicy": true, "state": "gone", "connectedSessions": 0]]])
        }
    }

    @Test func anOptionalFieldMayBeAbsentOrNullButNotOfAnotherType() throws {
        let absent = try Admin.Status.Reply(Self.status([:]))
        #expect(absent.lastReload == nil && absent.fleet == nil)
        #expect(try Admin.Status.Reply(Self.status(["lastReload": nil])) == absent)
        #expect(throws: MalformedMessage(field: "lastReload", reason: "is a string, expected an object or null")) {
            try Admin.Status.Reply(Self.status(["lastReload": "never"]))
        }
        #expect(throws: MalformedMessage(field: "target", reason: "is a number, expected a string or null")) {
            try Agent.Decide.Request(["session": "s", "action": "launch", "target": 5])
        }
    }

    @Test func aNilOptionalIsLeftOutAndUnknownFieldsAreIgnored() throws {
        let request = Agent.Decide.Request(session: "s", action: .clipboardCopy, target: nil, size: 12)
        #expect(request.json == ["session": "s", "action": "clipboard.copy", "size": 12])
        #expect(try Agent.Decide.Request(request.fields.merging(["fromTheFuture": true]) { _, new in new }) == request)
        #expect(Admin.Feedback(key: "k", severity: .info, message: "m", data: nil, at: "t").json
            == ["key": "k", "severity": "info", "message": "m", "at": "t"])
        #expect(NoFields().json == [:])
    }

    @Test func aSnapshotsFieldsStandBesideTheRepliesOwn() throws {
        let snapshot = Agent.AppSnapshot(
            state: .authorized, policyVersion: "v1", config: ["k": "v"], dlp: [:], compliance: [:],
            launch: Agent.LaunchVerdict(allowed: false, rule: "r", reason: "old", violation: .wipe),
            directives: [Agent.WipeDirective(id: "w1", issuedAt: "2026-11-29T12:00:00Z")])
        let view = Agent.SignedAppView(payload: "{}", signature: "c2ln")
        let reply = Agent.Register.Reply(session: "s1", snapshot: snapshot, managedApps: ["a", "b"], view: view)
        #expect(reply.fields["policyVersion"] == "v1" && reply.fields["session"] == "s1" && reply.fields["snapshot"] == nil)
        #expect(reply.fields["launch"] == ["allowed": false, "rule": "r", "reason": "old", "violation": "wipe"])
        #expect(reply.fields["view"] == ["payload": "{}", "signature": "c2ln"])
        #expect(try Agent.Register.Reply(reply.fields) == reply)
        var fields = reply.fields
        fields["directives"] = [["id": "w2"]]
        #expect(throws: MalformedMessage(field: "directives[0].issuedAt", reason: "is missing, expected a string")) {
            try Agent.Register.Reply(fields)
        }
        let update = Agent.Subscribe.Reply(reason: .notification, snapshot: snapshot, managedApps: nil, notification: ["n": 1],
                                        view: view)
        #expect(update.fields["managedApps"] == nil && update.fields["notification"] == ["n": 1])
        #expect(try Agent.Subscribe.Reply(update.fields) == update)
    }

    @Test func aSignedViewsPayloadCarriesTheSnapshotWithoutDirectives() throws {
        let snapshot = Agent.AppSnapshot(
            state: .authorized, policyVersion: "v1", config: [:], dlp: [:], compliance: [:],
            launch: Agent.LaunchVerdict(allowed: true, rule: "r", reason: "ok", violation: nil),
            directives: [Agent.WipeDirective(id: "w1", issuedAt: "2026-11-29T12:00:00Z")])
        let payload = Agent.AppViewPayload(appId: "a", uid: 1000, issuedAt: "2026-11-29T12:00:00Z", snapshot: snapshot,
                                           managedAppsSHA256: Agent.AppViewPayload.digest(managedApps: ["a"]))
        #expect(payload.snapshot.directives.isEmpty && payload.fields["directives"] == [])
        #expect(payload.fields["policyVersion"] == "v1" && payload.fields["uid"] == 1000)
        #expect(try Agent.AppViewPayload(payload.fields) == payload)
        var fields = payload.fields
        fields["directives"] = [["id": "w2", "issuedAt": "2026-11-29T12:00:00Z"]]
        #expect(try Agent.AppViewPayload(fields).snapshot.directives.isEmpty)
        fields["issuedAt"] = "yesterday"
        #expect(throws: MalformedMessage(field: "issuedAt", reason: "\"yesterday\" is not an RFC 3339 time such as 2026-11-29T12:00:00Z")) {
            try Agent.AppViewPayload(fields)
        }
    }

    @Test func anEventRepeatsItsReceivedTimeAsAt() throws {
        var event = Admin.Event(kind: "decision", appId: nil, data: [:], id: 1, occurredAt: "2026-11-29T12:00:00Z",
                                receivedAt: "2026-11-29T12:00:01Z")
        #expect(event.fields["at"] == "2026-11-29T12:00:01Z")
        event.receivedAt = "2026-11-29T12:00:02Z"
        #expect(event.fields["at"] == "2026-11-29T12:00:02Z")
        #expect(try Admin.Event(event.fields) == event)
    }

    @Test func aRequestsOwnRulesAreCheckedOnceItIsRead() {
        #expect(throws: MalformedMessage(field: "event", reason: "is \"didExplode\", expected one of "
            + Agent.reportableEvents.sorted().joined(separator: ", "))) {
            try Agent.ReportEvent.Request(["session": "s", "event": "didExplode"])
        }
        #expect(throws: MalformedMessage(field: "occurredAt", reason: "\"yesterday\" is not an RFC 3339 time such as 2026-11-29T12:00:00Z")) {
            try Agent.ReportEvent.Request(["session": "s", "event": "willTerminate", "occurredAt": "yesterday"])
        }
        #expect(throws: MalformedMessage(field: "until", reason: "\"soon\" is not an RFC 3339 time such as 2026-11-29T12:00:00Z")) {
            try Admin.EventHistory.Request(["until": "soon"])
        }
        #expect(throws: MalformedMessage(field: "limit", reason: "must be 1 to \(Admin.EventHistory.maxLimit)")) {
            try Admin.EventHistory.Request(["limit": 0])
        }
        #expect(throws: MalformedMessage(field: "after", reason: "must be 0 or more")) {
            try Admin.Events.Request(["after": -1])
        }
        #expect(throws: MalformedMessage(field: "filter.kinds[0]", reason: "is a boolean, expected a string")) {
            try Admin.Events.Request(["filter": ["kinds": [true]]])
        }
    }

    @Test func aVersionIsSentAsItsText() throws {
        let request = Admin.Decide.Request(appId: "a", action: .launch, appVersion: SemanticVersion("2.3.0-rc.1"))
        #expect(request.fields["appVersion"] == "2.3.0-rc.1")
        #expect(try Admin.Decide.Request(request.fields) == request)
        #expect(throws: MalformedMessage(field: "appVersion", reason: "is a number, expected a string or null")) {
            try Admin.Decide.Request(["appId": "a", "action": "launch", "appVersion": 2])
        }
    }

    /// `Agent.Decide` is read and written by hand (it is the hot call): exactly as its
    /// `Codable` would be, errors included.
    @Test func decidesHandWrittenCodingAgreesWithItsCodable() {
        let requests: [[String: JSONValue]] = [
            ["session": "s", "action": "clipboard.copy", "target": "t", "size": 3], ["session": "s", "action": "launch", "target": nil],
            ["session": "s", "action": "launch", "unknown": 1], ["action": "launch"], ["session": 1, "action": "launch"],
            ["session": "s", "action": "fly"], ["session": "s", "action": 3], ["session": "s"],
            ["session": "s", "action": "launch", "size": 1.5], ["session": "s", "action": "launch", "target": true],
        ]
        for parameters in requests {
            #expect(Result { () throws(MalformedMessage) in try Agent.Decide.Request(parameters) }
                == Result { () throws(MalformedMessage) in try MessageDecoder.read(Agent.Decide.Request.self, from: parameters) },
                "\(parameters)")
        }
        let replies: [[String: JSONValue]] = [
            ["allowed": true, "rule": "r", "reason": "why"], ["allowed": "yes", "rule": "r", "reason": "why"],
            ["allowed": false, "rule": "r"], ["allowed": false, "rule": nil, "reason": "why"],
        ]
        for parameters in replies {
            #expect(Result { () throws(MalformedMessage) in try Agent.Decide.Reply(parameters) }
                == Result { () throws(MalformedMessage) in try MessageDecoder.read(Agent.Decide.Reply.self, from: parameters) },
                "\(parameters)")
        }
        for request in [Agent.Decide.Request(session: "s", action: .print), Agent.Decide.Request(session: "s", action: .shareSend, target: "t", size: 0)] {
            #expect(request.fields == MessageEncoder.fields(of: request))
        }
        let reply = Agent.Decide.Reply(allowed: true, rule: "r", reason: "why")
        #expect(reply.fields == MessageEncoder.fields(of: reply))
    }

    /// `JSONValue`'s own `Codable` serves any coder, not only the message coder.
    @Test func jsonIsCodableThroughAnyCoder() throws {
        let value: JSONValue = ["a": [1, 2.5, "x", true, nil], "b": ["c": [:]], "d": []]
        let bytes = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(JSONValue.self, from: bytes) == value)
    }
}
