import Dispatch
import JSONCore
import ProctorKit
import Synchronization
import Varlink

/// One connection to a `FakeAgent`; sessions it registers belong to it, as with proctord.
final class FakeAgentConnection: AgentConnection {
    let agent: FakeAgent
    let sessions = Mutex<Set<String>>([])

    init(agent: FakeAgent) { self.agent = agent }

    func call(_ method: String, _ parameters: [String: JSONValue]) throws -> [String: JSONValue] {
        try agent.handle(method, parameters, connection: self)
    }

    func callMore(_ method: String, _ parameters: [String: JSONValue]) throws -> any AgentReplyStream {
        guard method == "\(FakeAgent.interface).Subscribe" else { throw VarlinkError.methodNotFound(method) }
        return try agent.subscribe(parameters, connection: self)
    }
}

/// The replies of one `Subscribe` call: pushed by the agent, taken by the app's thread.
final class Subscription: AgentReplyStream, Sendable {
    private struct Queue {
        var replies: [[String: JSONValue]] = []
        var closed = false
    }
    private let queue = Mutex(Queue())
    private let available = DispatchSemaphore(value: 0)

    func push(_ reply: [String: JSONValue]) {
        queue.withLock { $0.replies.append(reply) }
        available.signal()
    }

    /// Ends the stream as a broken connection would.
    func close() {
        queue.withLock { $0.closed = true }
        available.signal()
    }

    func next() throws -> [String: JSONValue]? {
        while true {
            let (reply, closed) = queue.withLock { queue -> ([String: JSONValue]?, Bool) in
                if queue.closed { return (nil, true) }
                return queue.replies.isEmpty ? (nil, false) : (queue.replies.removeFirst(), false)
            }
            if closed { throw FakeAgentError.notRunning }
            if let reply { return reply }
            available.wait()
        }
    }
}
