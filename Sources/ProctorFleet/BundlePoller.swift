import Dispatch
import Glibc
import LinuxIO
import Synchronization

/// A thread of its own that fetches the bundle every poll interval (`PollSchedule`) and hands
/// each outcome to `deliver` — which should post it to the event loop (`EventLoop.execute`),
/// so neither the fetch nor its timeouts ever hold the loop or a decision.
public final class BundlePoller: Sendable {
    /// One poll's result.
    public struct Outcome: Sendable {
        public let result: Result<FetchResult, FetchFailure>
        /// When the fetch finished, and when the next one starts (Unix seconds).
        public let finishedAt: Int
        public let nextPollAt: Int
        /// Failures in a row, this one included (0 after a success).
        public let consecutiveFailures: Int
    }

    private struct State {
        var stopped = false
        var started = false
        var etag: String?
        var schedule: PollSchedule
    }

    private let request: FetchRequest
    private let deliver: @Sendable (Outcome) -> Void
    private let state: Mutex<State>
    private let fetcher = BundleFetcher()
    private let wake = DispatchSemaphore(value: 0)

    /// A poller for `request` (its `etag` is the starting one) every `intervalSeconds`; call `start()`.
    /// A connection the server keeps open serves the next poll, however long the interval.
    public init(request: FetchRequest, intervalSeconds: Int, deliver: @escaping @Sendable (Outcome) -> Void) {
        let schedule = PollSchedule(interval: intervalSeconds)
        var request = request
        request.connectionIdleSeconds = schedule.longestDelayAfterSuccess + 1
        self.request = request
        self.deliver = deliver
        state = Mutex(State(etag: request.etag, schedule: schedule))
    }

    /// Starts the thread, which polls at once and then on schedule.
    public func start() {
        let first = state.withLock { state in
            defer { state.started = true }
            return !state.started
        }
        guard first else { return }
        DetachedThread.start { self.run() }
    }

    /// Polls now rather than at the next scheduled time.
    public func pollNow() { wake.signal() }

    /// Forgets the ETag, so the next poll fetches the bundle even if unchanged (after a bundle
    /// could not be applied for a reason that may pass, such as a storage failure).
    public func forgetETag() { state.withLock { $0.etag = nil } }

    /// Stops polling: a fetch in progress is abandoned within about a second and nothing is
    /// delivered after this returns. Does not wait for the thread, so it is safe on the event loop.
    public func stop() {
        state.withLock { $0.stopped = true }
        fetcher.cancel()
        wake.signal()
    }

    private func run() {
        while true {
            guard let etag = state.withLock({ $0.stopped ? nil : Optional($0.etag) }) else { return }
            var request = self.request
            request.etag = etag
            let result = Result { () throws(FetchFailure) in try fetcher.fetch(request) }
            let finishedAt = Int(time(nil))
            let random = Double(UInt32.random(in: 0...UInt32.max)) / (Double(UInt32.max) + 1)
            let delivered: Double? = state.withLock { state in
                guard !state.stopped else { return nil }
                if case .success(.fetched(_, let etag)) = result { state.etag = etag }
                let succeeded = if case .success = result { true } else { false }
                let delay = state.schedule.delay(afterSuccess: succeeded, random: random)
                // Delivered under the lock, so that nothing follows a `stop()`.
                deliver(Outcome(result: result, finishedAt: finishedAt, nextPollAt: finishedAt + Int(delay.rounded(.up)),
                                consecutiveFailures: state.schedule.consecutiveFailures))
                return delay
            }
            guard let delay = delivered else { return }
            _ = wake.wait(timeout: .now() + .milliseconds(Int(delay * 1000)))
        }
    }
}
