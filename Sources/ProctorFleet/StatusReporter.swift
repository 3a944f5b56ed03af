import Dispatch
import Glibc
import LinuxIO
import Synchronization

/// A thread of its own that POSTs status documents to `StatusURL=`: the loop hands it the
/// newest document (`submit`, never blocking) and it sends that one, so a burst of changes
/// costs one request and a slow MDM never holds the loop. A failed POST is retried with the
/// same capped, jittered backoff as polling, unless a newer document arrives first.
public final class StatusReporter: Sendable {
    /// One POST's result, for the daemon to log and show.
    public struct Outcome: Sendable {
        public let result: Result<Void, FetchFailure>
        /// When it finished (Unix seconds).
        public let finishedAt: Int
    }

    private struct State {
        var stopped = false
        var started = false
        var pending: [UInt8]?
        var schedule: PollSchedule
    }

    private let request: FetchRequest
    private let deliver: @Sendable (Outcome) -> Void
    private let state: Mutex<State>
    private let sender = BundleFetcher()
    private let wake = DispatchSemaphore(value: 0)

    /// A reporter POSTing to `request.url` with its TLS settings; call `start()`.
    /// A connection the server keeps open serves the next document, sent at least every
    /// `retryIntervalSeconds` (the daemon's status timer has the same period).
    public init(request: FetchRequest, retryIntervalSeconds: Int, deliver: @escaping @Sendable (Outcome) -> Void) {
        var request = request
        request.connectionIdleSeconds = retryIntervalSeconds + 1
        self.request = request
        self.deliver = deliver
        state = Mutex(State(schedule: PollSchedule(interval: retryIntervalSeconds)))
    }

    public func start() {
        let first = state.withLock { state in
            defer { state.started = true }
            return !state.started
        }
        if first { DetachedThread.start { self.run() } }
    }

    /// Makes `document` the next one sent, replacing any not sent yet.
    public func submit(_ document: [UInt8]) {
        state.withLock { $0.pending = document }
        wake.signal()
    }

    /// Stops the thread; a POST in progress is abandoned and nothing is delivered afterwards.
    public func stop() {
        state.withLock { $0.stopped = true }
        sender.cancel()
        wake.signal()
    }

    private func run() {
        var retryDelay: Double?
        while true {
            if let delay = retryDelay {
                _ = wake.wait(timeout: .now() + .milliseconds(Int(delay * 1000)))
            } else {
                wake.wait()
            }
            guard let document = state.withLock({ $0.stopped ? nil : $0.pending }) else {
                if state.withLock({ $0.stopped }) { return }
                retryDelay = nil
                continue
            }
            var post = request
            post.jsonBody = document
            let result = Result { () throws(FetchFailure) in _ = try sender.fetch(post) }
            let random = Double(UInt32.random(in: 0...UInt32.max)) / (Double(UInt32.max) + 1)
            let stopped: Bool = state.withLock { state in
                guard !state.stopped else { return true }
                let succeeded = if case .success = result { true } else { false }
                let delay = state.schedule.delay(afterSuccess: succeeded, random: random)
                // Sent: forget it unless a newer one came meanwhile. Failed: keep it for the retry.
                if succeeded, state.pending == document { state.pending = nil }
                retryDelay = succeeded ? nil : delay
                deliver(Outcome(result: result, finishedAt: Int(time(nil))))
                return false
            }
            if stopped { return }
        }
    }
}
