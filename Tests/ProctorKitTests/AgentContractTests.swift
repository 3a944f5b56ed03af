import Foundation
import JSONCore
import ProctorKit
import ProctorKitTesting
import ProctorProtocol
import Testing
import Varlink

/// One suite of Agent-interface scenarios run against both agents an app's tests can meet:
/// ProctorKitTesting's `FakeAgent` and the real proctord binary. Both must answer alike —
/// the fake is proctord's own code, and this is where a drift would show.
@Suite(.serialized) struct AgentContractTests {
    enum Backend: String, CaseIterable, CustomTestStringConvertible {
        case fake, proctord
        var testDescription: String { rawValue }
    }

    /// An agent and the administrator's hands on it.
    struct Agent_ {
        let transport: any AgentTransport
        let wipe: (String) throws -> String
        let notify: (String, [String: JSONValue]) throws -> Int
        /// Keeps the agent alive for the test.
        let owner: AnyObject
    }

    static let appID = "com.example.notes"

    /// A policy this test process may register under with the real daemon (its own
    /// executable; the fake checks no identity).
    static func policy() throws -> JSONValue {
        let match: JSONValue = ["executable": .string(try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")),
                                "users": ["*"]]
        return ["schema": 1, "version": "contract.1",
                "apps": [appID: ["state": "authorized", "match": match, "config": ["syncDays": 14], "dlp": ["print": "block"]],
                         "com.example.mail": ["state": "authorized", "match": match]]]
    }

    static func start(_ backend: Backend) throws -> Agent_ {
        switch backend {
        case .fake:
            let agent = try FakeAgent(policy: try policy().serializedString())
            return Agent_(transport: agent, wipe: { try agent.wipe(appID: $0) },
                          notify: { try agent.notify(appID: $0, payload: $1) }, owner: agent)
        case .proctord:
            let daemon = try RunningDaemon(policy: try policy())
            return Agent_(transport: VarlinkAgentTransport(path: daemon.agentSocket),
                          wipe: { try daemon.admin("Wipe", ["appId": .string($0)])["directiveId"]?.stringValue ?? "" },
                          notify: { try daemon.admin("Notify", ["appId": .string($0), "payload": .object($1)])["delivered"]?.intValue ?? -1 },
                          owner: daemon)
        }
    }

    /// A typed call on a connection, as the SDK makes it.
    static func call<Method: ProtocolMethod>(_ connection: any AgentConnection, _ method: Method.Type,
                                             _ request: Method.Request) throws -> Method.Reply {
        try Method.Reply(try connection.call(Method.qualifiedName, request.fields))
    }

    static func refusal(_ body: () throws -> Void) -> VarlinkError? {
        do {
            try body()
            return nil
        } catch {
            return error as? VarlinkError
        }
    }

    @Test(arguments: Backend.allCases)
    func registrationAnswersTheAppsStateAndUnknownAppsAreRefused(_ backend: Backend) throws {
        let agent = try Self.start(backend)
        let connection = try agent.transport.connect()
        let reply = try Self.call(connection, Agent.Register.self, .init(appId: Self.appID, version: "2.0.0"))
        #expect(reply.snapshot.state == .authorized)
        #expect(reply.snapshot.policyVersion == "contract.1")
        #expect(reply.snapshot.config == ["syncDays": 14])
        #expect(reply.managedApps == ["com.example.mail", Self.appID])
        let decision = try Self.call(connection, Agent.Decide.self, .init(session: reply.session, action: .print))
        #expect(decision == Agent.Decide.Reply(allowed: false, rule: "apps[\"com.example.notes\"].dlp.print",
                                               reason: decision.reason))
        let unknown = Self.refusal { _ = try Self.call(connection, Agent.Register.self, .init(appId: "org.example.other", version: nil)) }
        #expect(unknown == AgentError.unknownApp("org.example.other"))
    }

    @Test(arguments: Backend.allCases)
    func reportsOutsideTheContractAreRefused(_ backend: Backend) throws {
        let agent = try Self.start(backend)
        let connection = try agent.transport.connect()
        let session = try Self.call(connection, Agent.Register.self, .init(appId: Self.appID, version: nil)).session
        let event = Self.refusal {
            _ = try connection.call(Agent.ReportEvent.qualifiedName, ["session": .string(session), "event": "didExplode"])
        }
        #expect(event?.name == "io.proctor.Agent.InvalidParameter")
        #expect(event?.parameters["parameter"] == "event")
        _ = try Self.call(connection, Agent.ReportEvent.self, .init(session: session, event: "didBecomeActive", detail: nil))

        let elsewhere = try agent.transport.connect()
        let foreign = Self.refusal {
            _ = try Self.call(elsewhere, Agent.Decide.self, .init(session: session, action: .print))
        }
        #expect(foreign == AgentError.invalidSession(session))
    }

    @Test(arguments: Backend.allCases)
    func aConnectionHoldsAtMostSixteenSessions(_ backend: Backend) throws {
        let agent = try Self.start(backend)
        let connection = try agent.transport.connect()
        for _ in 0..<16 { _ = try Self.call(connection, Agent.Register.self, .init(appId: Self.appID, version: nil)) }
        let seventeenth = Self.refusal { _ = try Self.call(connection, Agent.Register.self, .init(appId: Self.appID, version: nil)) }
        #expect(seventeenth == AgentError.invalidParameter("appId", "a connection may hold at most 16 sessions"))
    }

    @Test(arguments: Backend.allCases)
    func subscribersHearWipesAndNotificationsUntilAcknowledged(_ backend: Backend) throws {
        let agent = try Self.start(backend)
        let connection = try agent.transport.connect()
        let session = try Self.call(connection, Agent.Register.self, .init(appId: Self.appID, version: nil)).session
        let subscriber = try agent.transport.connect()
        let subscribed = try Self.call(subscriber, Agent.Register.self, .init(appId: Self.appID, version: nil)).session
        let stream = try subscriber.callMore(Agent.Subscribe.qualifiedName, Agent.Subscribe.Request(session: subscribed).fields)
        let first = try Agent.Subscribe.Reply(try #require(try stream.next()))
        #expect(first.reason == .current)
        #expect(first.managedApps == nil)  // Register already sent the set

        let directive = try agent.wipe(Self.appID)
        let wipe = try Agent.Subscribe.Reply(try #require(try stream.next()))
        #expect(wipe.reason == .wipe)
        #expect(wipe.snapshot.directives.map(\.id) == [directive])

        #expect(try agent.notify(Self.appID, ["command": "sync"]) == 1)
        let notification = try Agent.Subscribe.Reply(try #require(try stream.next()))
        #expect(notification.reason == .notification)
        #expect(notification.notification == ["command": "sync"])

        _ = try Self.call(connection, Agent.AcknowledgeWipe.self, .init(session: session, directiveId: directive))
        let again = try Self.call(connection, Agent.Register.self, .init(appId: Self.appID, version: nil))
        #expect(again.snapshot.directives.isEmpty)
        let unknown = Self.refusal {
            _ = try Self.call(connection, Agent.AcknowledgeWipe.self, .init(session: session, directiveId: "no-such-wipe"))
        }
        #expect(unknown == AgentError.invalidParameter("directiveId", "no wipe directive no-such-wipe for this app"))
    }
}
