public import JSONCore
import Varlink

/// How `PolicyApplication` reaches the agent (proctord's `io.proctor.Agent` interface).
///
/// The default is `VarlinkAgentTransport`, a Unix socket. `ProctorKitTesting` supplies an
/// in-process agent fed a policy document, so a delegate can be tested without a daemon.
/// Each connection is used by one thread at a time; a session belongs to the connection that
/// registered it.
public protocol AgentTransport: Sendable {
    /// Opens a new connection. Throws when the agent cannot be reached.
    func connect() throws -> any AgentConnection
}

/// One connection to the agent: calls in order, one at a time.
public protocol AgentConnection: AnyObject, Sendable {
    /// Calls `method` (`io.proctor.Agent.Register`, …) and returns the reply's parameters.
    /// Throws `VarlinkError` for an error reply and any other error when the connection failed.
    func call(_ method: String, _ parameters: [String: JSONValue]) throws -> [String: JSONValue]
    /// Calls `method` with `more`; the stream hands out the replies as they arrive.
    func callMore(_ method: String, _ parameters: [String: JSONValue]) throws -> any AgentReplyStream
}

/// The replies to a `more` call.
public protocol AgentReplyStream: AnyObject {
    /// Blocks for the next reply; nil after the final one. Throws when the connection fails.
    func next() throws -> [String: JSONValue]?
}

/// The agent on a Varlink Unix socket: `$PROCTOR_AGENT_SOCKET`, else `/run/proctor/io.proctor.Agent`.
public struct VarlinkAgentTransport: AgentTransport {
    /// The environment variable that names the agent's socket.
    public static let environmentVariable = "PROCTOR_AGENT_SOCKET"
    /// Where proctord listens under systemd.
    public static let defaultPath = "/run/proctor/io.proctor.Agent"
    /// Replies carry the set of managed apps, which grows with the policy: allow large ones.
    static let maxMessageBytes = 64 << 20

    public let path: String

    public init(path: String) { self.path = path }

    /// The socket named by the environment, else the default path.
    public static func fromEnvironment(_ environment: [String: String]) -> VarlinkAgentTransport {
        if let path = environment[environmentVariable], !path.isEmpty { return VarlinkAgentTransport(path: path) }
        return VarlinkAgentTransport(path: defaultPath)
    }

    public func connect() throws -> any AgentConnection {
        VarlinkAgentConnection(client: try VarlinkClient(path: path, maxMessageBytes: Self.maxMessageBytes))
    }
}

/// A `VarlinkClient` handed from thread to thread, never used by two at once (the
/// `AgentConnection` contract), hence unchecked.
final class VarlinkAgentConnection: AgentConnection, @unchecked Sendable {
    private let client: VarlinkClient

    init(client: VarlinkClient) { self.client = client }

    func call(_ method: String, _ parameters: [String: JSONValue]) throws -> [String: JSONValue] {
        try client.call(method, parameters)
    }

    func callMore(_ method: String, _ parameters: [String: JSONValue]) throws -> any AgentReplyStream {
        VarlinkAgentReplyStream(stream: try client.callMore(method, parameters))
    }
}

final class VarlinkAgentReplyStream: AgentReplyStream {
    private var stream: VarlinkReplyStream
    init(stream: VarlinkReplyStream) { self.stream = stream }
    func next() throws -> [String: JSONValue]? { try stream.next() }
}
