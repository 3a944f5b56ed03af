import Dispatch
import Foundation
import JSONCore
public import ProctorProtocol
import Synchronization
import Varlink

/// Sends the app's reports to proctord — lifecycle events, data-action denials, feedback,
/// wipe acknowledgements — in the order they were made, from a thread of its own with a
/// connection (and session) of its own, so the main thread never waits on proctord.
///
/// While proctord is away reports queue up (at most `capacity`; past that the oldest are
/// dropped and counted) and the thread retries with capped exponential backoff.
final class EventReporter: Sendable {
    static let capacity = 1024

    /// One Agent call, made once there is a session; or a marker that signals `reached` when
    /// every report queued before it has been sent.
    struct Report: Sendable {
        let method: String
        let parameters: @Sendable (_ session: String) -> [String: JSONValue]
        var reached: DispatchSemaphore?

        init<Method: AgentMethod>(_ method: Method.Type, _ request: @escaping @Sendable (_ session: String) -> Method.Request) {
            self.method = Method.qualifiedName
            parameters = { request($0).fields }
        }

        init(reached: DispatchSemaphore) {
            method = ""
            parameters = { _ in [:] }
            self.reached = reached
        }
    }

    private struct Queue {
        var reports: [Report] = []
        var dropped = 0
    }

    private let link: AgentLink
    private let queue = Mutex(Queue())
    private let pending = DispatchSemaphore(value: 0)

    init(link: AgentLink) {
        self.link = link
    }

    /// Starts the sending thread.
    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "ProctorKit.EventReporter"
        thread.start()
    }

    /// Queues `ReportEvent(event, detail)` with the time it happened (now), so an event
    /// queued while proctord is away keeps its own time in proctord's history.
    func event(_ event: String, detail: [String: JSONValue]? = nil) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let occurredAt = RFC3339.string(milliseconds: Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec / 1_000_000))
        enqueue(Report(Agent.ReportEvent.self) {
            Agent.ReportEvent.Request(session: $0, event: event, detail: detail, occurredAt: occurredAt)
        })
    }

    /// Queues `ReportFeedback`.
    func feedback(key: String, severity: FeedbackSeverity, message: String, data: [String: JSONValue]? = nil) {
        enqueue(Report(Agent.ReportFeedback.self) {
            Agent.ReportFeedback.Request(session: $0, key: key, severity: severity, message: message, data: data)
        })
    }

    /// Queues `AcknowledgeWipe`.
    func acknowledgeWipe(_ directiveID: String, completed: Bool, message: String) {
        enqueue(Report(Agent.AcknowledgeWipe.self) {
            Agent.AcknowledgeWipe.Request(session: $0, directiveId: directiveID, outcome: completed ? .completed : .failed,
                                          message: message)
        })
    }

    /// Waits until every report queued so far has been sent, for at most `timeout`; true when
    /// they were. For the moments just before the process ends.
    @discardableResult
    func flush(timeout: Duration) -> Bool {
        let reached = DispatchSemaphore(value: 0)
        enqueue(Report(reached: reached))
        return reached.wait(timeout: .now() + timeout.seconds) == .success
    }

    /// Reports dropped because the queue was full, so far.
    var droppedCount: Int { queue.withLock { $0.dropped } }

    private func enqueue(_ report: Report) {
        queue.withLock { queue in
            if queue.reports.count >= Self.capacity {
                queue.reports.removeFirst()
                queue.dropped += 1
            }
            queue.reports.append(report)
        }
        pending.signal()
    }

    private func run() -> Never {
        var registration: AgentLink.Registration?
        var backoff = ReconnectBackoff()
        while true {
            pending.wait()
            while let report = queue.withLock({ $0.reports.first }) {
                if let reached = report.reached {
                    queue.withLock { queue in
                        if !queue.reports.isEmpty { queue.reports.removeFirst() }
                    }
                    reached.signal()
                    continue
                }
                if registration == nil {
                    do {
                        registration = try link.register()
                        backoff.reset()
                    } catch {
                        Thread.sleep(forTimeInterval: backoff.next().seconds)
                        continue
                    }
                }
                guard let session = registration else { continue }
                do {
                    _ = try session.connection.call(report.method, report.parameters(session.session))
                } catch {
                    // A refused report (a bad value) is dropped: retrying cannot help. When the
                    // connection or the session is gone, the report stays and we reconnect.
                    let refused = (error as? VarlinkError).map { $0.name != "\(Agent.interface).InvalidSession" } ?? false
                    if !refused {
                        registration = nil
                        continue
                    }
                }
                queue.withLock { queue in
                    if !queue.reports.isEmpty { queue.reports.removeFirst() }
                }
            }
        }
    }
}

/// How serious a feedback entry is (`ReportFeedback`'s `severity`: `info` or `error`).
public typealias FeedbackSeverity = Agent.FeedbackSeverity
