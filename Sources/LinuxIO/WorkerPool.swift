import CLinux
import Glibc
import Synchronization

/// Threads for work that should not hold up the thread that has it (an event loop): started as
/// work arrives, at most `maximumThreads`, kept for later work. An idle worker blocks on a
/// condition variable, with no timer: a process whose workers have nothing to do makes no
/// system call. (libdispatch's global queues, once used, wake the process every second for
/// good on Linux, to watch their own threads.)
///
/// Work never runs at a higher priority than the thread that handed it over: a worker lowers
/// its own `nice` to that thread's (or to `niceAtLeast`, if lower) before running it. A
/// worker cannot raise its `nice` again (`ThreadPriority`), so once a low-priority job has
/// run on it, later work there runs at that priority too — never higher than asked.
public final class WorkerPool: Sendable {
    /// The process's pool: one thread per CPU, at least two.
    public static let shared = WorkerPool(maximumThreads: max(2, onlineCPUs))

    /// How many CPUs the process may run on now.
    public static var onlineCPUs: Int { max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

    public let maximumThreads: Int
    private let lock = ConditionLock()
    nonisolated(unsafe) private var state = State()

    private struct State {
        var pending: [Job] = []
        var threads = 0
        var idle = 0
        /// The kernel's ids of the workers, for tests.
        var threadIDs: [pid_t] = []
    }

    private struct Job {
        let nice: Int32
        let work: @Sendable () -> Void
    }

    public init(maximumThreads: Int) {
        precondition(maximumThreads > 0, "a pool has a thread at least")
        self.maximumThreads = maximumThreads
    }

    /// Runs `work` on a worker, at the calling thread's `nice` or `niceAtLeast`, whichever is
    /// lower in priority. Work queues in the order it comes while every worker is busy.
    public func run(niceAtLeast minimumNice: Int32 = 0, _ work: @escaping @Sendable () -> Void) {
        let job = Job(nice: max(ThreadPriority.currentNice ?? minimumNice, minimumNice), work: work)
        let startsWorker = lock.withLock {
            state.pending.append(job)
            guard state.pending.count > state.idle, state.threads < maximumThreads else {
                lock.signal()
                return false
            }
            state.threads += 1
            return true
        }
        guard startsWorker, !startWorker() else { return }
        // No thread could be made: with no worker at all, nothing would ever run the work queued.
        let runsHere = lock.withLock {
            state.threads -= 1
            guard state.threads == 0 else { return [Job]() }
            defer { state.pending.removeAll() }
            return state.pending
        }
        for job in runsHere { job.work() }
    }

    /// Runs `body` once for each index in `0..<iterations`, on the calling thread and on
    /// workers (one thread per CPU at most, the caller included), and returns once every
    /// index is done. The caller runs index 0 itself, so what it allocates lands in the
    /// caller's malloc arena on every run, whichever thread was free first; the others are
    /// taken in turn by whichever thread is free. A worker that starts after the last index
    /// was taken does nothing, so busy workers only mean the caller does more of the work
    /// itself. What `body` captured is released before this returns, on the calling thread.
    public func parallelFor(_ iterations: Int, _ body: @escaping @Sendable (Int) -> Void) {
        guard iterations > 1 else {
            if iterations == 1 { body(0) }
            return
        }
        let loop = ParallelLoop(iterations: iterations, body: body)
        for _ in 1..<min(iterations, Self.onlineCPUs, maximumThreads + 1) {
            run { loop.takeIndices() }
        }
        loop.takeIndices(startingWith: 0)
        loop.waitUntilDone()
        loop.dropBody()
    }

    private func startWorker() -> Bool {
        DetachedThread.startWithSignalsBlocked { self.serve() }
    }

    /// The kernel's ids of the workers started so far.
    var threadIDs: [pid_t] { lock.withLock { state.threadIDs } }

    private func serve() {
        let id = gettid()
        lock.withLock { state.threadIDs.append(id) }
        while true {
            let job = lock.withLock {
                while state.pending.isEmpty {
                    state.idle += 1
                    lock.wait()
                    state.idle -= 1
                }
                return state.pending.removeFirst()
            }
            ThreadPriority.lowerCurrentThread(toNice: job.nice)
            job.work()
        }
    }
}

/// The shared part of one `WorkerPool.parallelFor`.
private final class ParallelLoop: Sendable {
    let iterations: Int
    /// Dropped by the caller once every index is done (`dropBody`), so that what it captured
    /// is released on the caller's thread, by the time `parallelFor` returns. A worker keeps
    /// the loop until its job returns: had it kept the body, a worker descheduled on its way
    /// out could free a captured 100 000-app policy tens of milliseconds later, after
    /// proctord's start gave free memory back to the kernel (the idle daemon then kept
    /// ≈ 15 MiB of free heap).
    nonisolated(unsafe) private var body: (@Sendable (Int) -> Void)?
    /// The next index to take; 0 is the caller's (`takeIndices(startingWith:)`).
    private let next = Atomic<Int>(1)
    private let lock = ConditionLock()
    nonisolated(unsafe) private var done = 0

    init(iterations: Int, body: @escaping @Sendable (Int) -> Void) {
        self.iterations = iterations
        self.body = body
    }

    /// Every index is done, so no thread reads `body` again: a thread reads it only for an
    /// index it took, before counting that index done under `lock`.
    func dropBody() {
        body = nil
    }

    /// Runs `first`, if given, then indices taken in turn until none is left.
    func takeIndices(startingWith first: Int? = nil) {
        var index = first ?? takeIndex()
        while index < iterations {
            body!(index)
            lock.withLock {
                done += 1
                if done == iterations { lock.broadcast() }
            }
            index = takeIndex()
        }
    }

    private func takeIndex() -> Int {
        next.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    func waitUntilDone() {
        lock.withLock {
            while done < iterations { lock.wait() }
        }
    }
}
