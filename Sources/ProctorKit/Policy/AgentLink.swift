import Foundation
import JSONCore
import ProctorCrypto
import ProctorProtocol
import Varlink

/// The conversation with proctord's Agent interface that keeps an app's view current:
/// registration (whose reply carries the launch decision) and a `Subscribe` stream that survives proctord
/// restarting (reconnect with backoff, register again, subscribe again).
///
/// Blocking: every method runs on the caller's thread; `maintainSubscription` runs for the
/// life of the process on a thread of its own.
final class AgentLink: Sendable {
    /// A registered session and the connection it belongs to.
    struct Registration: Sendable {
        let connection: any AgentConnection
        let session: String
        let update: AgentUpdate
    }

    /// Why registration failed, in words for the operator.
    struct Failure: Error, CustomStringConvertible {
        let description: String
        /// proctord could not be reached (no socket, refused, the connection broke), as opposed
        /// to proctord answering with a refusal: only then may the app launch offline.
        var agentUnreachable = false
    }

    enum Connectivity: Sendable {
        case lost(String)
        case restored
    }

    let transport: any AgentTransport
    let appID: String
    let version: String?

    init(transport: any AgentTransport, appID: String, version: String?) {
        self.transport = transport
        self.appID = appID
        self.version = version
    }

    /// Connects and registers; the session lives as long as the returned connection.
    func register() throws(Failure) -> Registration {
        let connection: any AgentConnection
        do {
            connection = try transport.connect()
        } catch {
            throw Failure(description: "\(error)", agentUnreachable: true)
        }
        do {
            let reply = try connection.call(Agent.Register.self, Agent.Register.Request(appId: appID, version: version))
            return Registration(connection: connection, session: reply.session, update: AgentUpdate(reply))
        } catch let error as VarlinkError {
            throw Failure(description: Self.explain(error))
        } catch let error as Failure {
            throw error
        } catch {
            throw Failure(description: "\(error)", agentUnreachable: true)
        }
    }

    /// The app's data key for this user, from proctord (`GetDataKey`) on `registration`'s
    /// connection (before its subscription starts), or on a fresh registration when nil.
    func fetchDataKey(_ registration: Registration? = nil) throws(Failure) -> (key: SymmetricKey, generation: Int) {
        let registration = if let registration { registration } else { try register() }
        do {
            let reply = try registration.connection.call(Agent.GetDataKey.self, Agent.GetDataKey.Request(session: registration.session))
            return (try SymmetricKey(base64: reply.key), reply.generation)
        } catch let error as VarlinkError {
            throw Failure(description: Self.explain(error))
        } catch {
            throw Failure(description: "\(error)")
        }
    }

    /// Subscribes on `registration`'s connection and hands every reply to `onUpdate`. When
    /// the connection fails it reports `.lost`, waits (capped exponential backoff), registers
    /// again, reports `.restored`, hands over the new registration's state and subscribes
    /// again; without a registration (an app launched offline) it starts by reconnecting.
    /// Never returns.
    func maintainSubscription(from registration: Registration?,
                              onUpdate: @Sendable (AgentUpdate) -> Void,
                              onConnectivity: @Sendable (Connectivity) -> Void) -> Never {
        var current: Registration? = registration
        var backoff = ReconnectBackoff()
        while true {
            if let registration = current {
                let problem = subscribe(registration, onUpdate: onUpdate)
                current = nil
                onConnectivity(.lost(problem))
            }
            Thread.sleep(forTimeInterval: backoff.next().seconds)
            do {
                let registration = try register()
                backoff.reset()
                current = registration
                onConnectivity(.restored)
                onUpdate(registration.update)
            } catch {
                continue
            }
        }
    }

    /// Reads the `Subscribe` stream until it fails; returns why it ended.
    private func subscribe(_ registration: Registration, onUpdate: @Sendable (AgentUpdate) -> Void) -> String {
        do {
            let stream = try registration.connection.callMore(Agent.Subscribe.qualifiedName,
                                                               Agent.Subscribe.Request(session: registration.session).fields)
            var managedApps = registration.update.managedApps
            while let parameters = try stream.next() {
                let update: AgentUpdate
                do {
                    update = AgentUpdate(try Agent.Subscribe.Reply(parameters), knownManagedApps: managedApps)
                } catch {
                    return "proctord's reply is malformed: \(error)"
                }
                managedApps = update.managedApps
                onUpdate(update)
            }
            return "proctord ended the subscription"
        } catch let error as VarlinkError {
            return Self.explain(error)
        } catch {
            return "\(error)"
        }
    }

    static func explain(_ error: VarlinkError) -> String {
        switch error.name {
        case "\(Agent.interface).UnknownApp": "the app id is not in proctord's policy"
        case "\(Agent.interface).AppBlocked":
            "proctord refuses: \(error.parameters["reason"]?.stringValue ?? "the app is not authorized")"
        case "\(Agent.interface).IdentityMismatch":
            "proctord does not recognise this process as the app (\(error.parameters["reason"]?.stringValue ?? "identity mismatch"))"
        default: "\(error)"
        }
    }
}

extension AgentConnection {
    /// Calls `method` with a typed request and reads its typed reply. Throws `VarlinkError`
    /// for an error reply, `MalformedMessage` for a reply not of the contract's shape and
    /// any other error when the connection failed.
    func call<Method: AgentMethod>(_ method: Method.Type, _ request: Method.Request) throws -> Method.Reply {
        let parameters = try call(Method.qualifiedName, request.fields)
        do {
            return try Method.Reply(parameters)
        } catch {
            throw AgentLink.Failure(description: "proctord's \(Method.name) reply is malformed: \(error)")
        }
    }
}

extension Duration {
    /// The duration in seconds, as `Thread.sleep` wants it.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
