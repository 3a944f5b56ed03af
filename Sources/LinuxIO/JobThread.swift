import Glibc

/// A thread of its own that runs one job when asked: at once, or once a delay has passed. In
/// between it blocks on a condition variable, with a timeout only while a delayed run is
/// pending, so an idle process is never woken by it (a Dispatch timer started libdispatch's
/// pool monitor, which woke the process every second for good). Runs are never concurrent;
/// requests made while the job runs are served after it. The thread ends with the last
/// reference to this object, or with `stop()`.
public final class JobThread: @unchecked Sendable {
    /// Why the job runs.
    public enum Trigger: Sendable {
        /// `runSoon()` asked.
        case request
        /// The delay of `run(after:)` passed.
        case deadline
    }

    private final class Shared: @unchecked Sendable {
        let lock = ConditionLock()
        // Guarded by `lock`.
        var requested = false
        var deadline: UInt64?
        var running = false
        var stopped = false
    }

    private let shared = Shared()

    /// Starts the thread (with the process's signals blocked, as a worker's); `job` runs on it.
    /// `job` should not hold a strong reference to this thread's owner: the thread would keep
    /// it alive.
    public init(_ job: @escaping @Sendable (Trigger) -> Void) {
        let shared = self.shared
        let started = DetachedThread.startWithSignalsBlocked { Self.serve(shared, job) }
        precondition(started, "no thread could be created for a JobThread")
    }

    deinit { stop() }

    /// Runs the job as soon as the thread is free.
    public func runSoon() {
        shared.lock.withLock {
            shared.requested = true
            shared.lock.signal()
        }
    }

    /// Runs the job once `delay` has passed (or sooner, if a run already pending is due sooner).
    public func run(after delay: Duration) {
        let due = MonotonicClock.nanoseconds() &+ EventLoop.nanoseconds(delay)
        shared.lock.withLock {
            if let deadline = shared.deadline, deadline <= due { return }
            shared.deadline = due
            shared.lock.signal()
        }
    }

    /// Waits until no run is requested or under way (a delayed one may still be pending).
    public func waitUntilIdle() {
        while shared.lock.withLock({ shared.requested || shared.running }) {
            usleep(1_000)
        }
    }

    /// Ends the thread once the run under way, if any, returns; pending runs are dropped.
    public func stop() {
        shared.lock.withLock {
            shared.stopped = true
            shared.lock.signal()
        }
    }

    private static func serve(_ shared: Shared, _ job: (Trigger) -> Void) {
        shared.lock.withLock {
            while !shared.stopped {
                let trigger: Trigger
                if shared.requested {
                    shared.requested = false
                    trigger = .request
                } else if let deadline = shared.deadline, MonotonicClock.nanoseconds() >= deadline {
                    shared.deadline = nil
                    trigger = .deadline
                } else {
                    if let deadline = shared.deadline {
                        shared.lock.wait(untilMonotonicNanoseconds: deadline)
                    } else {
                        shared.lock.wait()
                    }
                    continue
                }
                shared.running = true
                shared.lock.withoutLock { job(trigger) }
                shared.running = false
            }
        }
    }
}
