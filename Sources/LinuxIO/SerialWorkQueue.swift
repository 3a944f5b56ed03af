/// Work run one job at a time, in the order it was handed over, on a `WorkerPool`'s threads:
/// for work whose order matters (files written one after another) without a thread of its own.
/// Each job runs at the priority `WorkerPool.run` gives it.
public final class SerialWorkQueue: Sendable {
    private let pool: WorkerPool
    private let lock = ConditionLock()
    nonisolated(unsafe) private var pending: [Job] = []
    /// Whether a worker is running this queue's jobs (one at most).
    nonisolated(unsafe) private var draining = false

    private struct Job {
        let nice: Int32
        let work: @Sendable () -> Void
    }

    public init(on pool: WorkerPool = .shared) {
        self.pool = pool
    }

    /// Runs `work` after the work handed over before it, at the calling thread's `nice` or
    /// `niceAtLeast`, whichever is lower in priority.
    public func run(niceAtLeast minimumNice: Int32 = 0, _ work: @escaping @Sendable () -> Void) {
        let nice = max(ThreadPriority.currentNice ?? minimumNice, minimumNice)
        let startsDrain = lock.withLock {
            pending.append(Job(nice: nice, work: work))
            defer { draining = true }
            return !draining
        }
        if startsDrain { pool.run(niceAtLeast: nice) { self.drain() } }
    }

    /// Returns once every job handed over so far has run.
    public func waitUntilIdle() {
        lock.withLock {
            while draining { lock.wait() }
        }
    }

    private func drain() {
        while true {
            let next = lock.withLock { () -> Job? in
                guard !pending.isEmpty else {
                    draining = false
                    lock.broadcast()
                    return nil
                }
                return pending.removeFirst()
            }
            guard let next else { return }
            ThreadPriority.lowerCurrentThread(toNice: next.nice)
            next.work()
        }
    }
}
