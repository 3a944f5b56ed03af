import Foundation
import JSONCore
import Varlink

/// The conversation with proctord's Agent interface that keeps an app's view current:
/// registration, the launch decision and a `Subscribe` stream that survives proctord
/// restarting (reconnect with backoff, register again, subscribe again).
///
/// Blocking: every method runs on the caller's thread; `maintainSubscription` runs for the
/// life of the process on a thread of its own.
final class AgentLink: Sendable {
    static let interface = "io.proctor.Agent"

    /// A registered session and the connection it belongs to.
    struct Registration: Sendable {
        let connection: any AgentConnection
        let session: String
        let update: AgentUpdate
    }

    /// Why registration failed, in words for the operator.
    struct Failure: Error, CustomStringConvertible {
        let description: String
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
        do {
            let connection = try transport.connect()
            var parameters: [String: JSONValue] = ["appId": .string(appID)]
            if let version { parameters["version"] = .string(version) }
            let reply = try connection.call("\(Self.interface).Register", parameters)
            guard let session = reply["session"]?.stringValue else { throw Failure(description: "proctord's reply has no session") }
            return Registration(connection: connection, session: session, update: try AgentUpdate(reply: reply))
        } catch let failure as Failure {
            throw failure
        } catch let error as VarlinkError {
            throw Failure(description: Self.explain(error))
        } catch {
            throw Failure(description: "\(error)")
        }
    }

    /// proctord's `launch` decision for the registered version: (allowed, reason).
    func decideLaunch(_ registration: Registration) throws(Failure) -> (allowed: Bool, reason: String) {
        do {
            let reply = try registration.connection.call("\(Self.interface).Decide",
                                                         ["session": .string(registration.session), "action": "launch"])
            guard let allowed = reply["allowed"]?.boolValue else { throw Failure(description: "proctord's launch decision has no allowed") }
            return (allowed, reply["reason"]?.stringValue ?? "")
        } catch let failure as Failure {
            throw failure
        } catch let error as VarlinkError {
            throw Failure(description: Self.explain(error))
        } catch {
            throw Failure(description: "\(error)")
        }
    }

    /// Subscribes on `registration`'s connection and hands every reply to `onUpdate`. When
    /// the connection fails it reports `.lost`, waits (capped exponential backoff), registers
    /// again, reports `.restored`, hands over the new registration's state and subscribes
    /// again. Never returns.
    func maintainSubscription(from registration: Registration,
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
            let stream = try registration.connection.callMore("\(Self.interface).Subscribe",
                                                               ["session": .string(registration.session)])
            var managedApps = registration.update.managedApps
            while let reply = try stream.next() {
                do {
                    let update = try AgentUpdate(reply: reply, defaultReason: .policy, knownManagedApps: managedApps)
                    managedApps = update.managedApps
                    onUpdate(update)
                } catch {
                    return "\(error)"
                }
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
        case "\(interface).UnknownApp": "the app id is not in proctord's policy"
        case "\(interface).IdentityMismatch":
            "proctord does not recognise this process as the app (\(error.parameters["reason"]?.stringValue ?? "identity mismatch"))"
        default: "\(error)"
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
