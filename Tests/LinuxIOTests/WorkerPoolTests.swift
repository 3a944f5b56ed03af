import CLinux
import Glibc
@testable import LinuxIO
import Synchronization
import Testing

@Suite struct WorkerPoolTests {
    /// `nice` of the calling thread.
    static func currentNice() -> Int32 {
        getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
    }

    /// What a job saw: the thread it ran on and that thread's `nice`.
    struct Seen: Equatable, Sendable {
        let thread: pthread_t
        let nice: Int32
    }

    static func runAndWait(on pool: WorkerPool, niceAtLeast: Int32 = 0) -> Seen? {
        let seen = Shared<Seen?>(nil)
        pool.run(niceAtLeast: niceAtLeast) { seen.update { $0 = Seen(thread: pthread_self(), nice: currentNice()) } }
        _ = eventually { seen.value != nil }
        return seen.value
    }

    @Test func workRunsOnAWorkerThread() throws {
        let pool = WorkerPool(maximumThreads: 2)
        let seen = try #require(Self.runAndWait(on: pool))
        #expect(seen.thread != pthread_self())
        #expect(pool.threadIDs.count == 1)
    }

    /// A job runs at the `nice` of the thread that handed it over, or lower when asked, never
    /// higher: a worker lowered once stays lowered.
    @Test func workNeverRunsAtAHigherPriorityThanTheThreadThatHandsItOver() throws {
        let base = Self.currentNice()
        let seen = Shared<(fromLowered: Seen?, asked: Seen?, fromHigher: Seen?)?>(nil)
        let pool = WorkerPool(maximumThreads: 1)
        DetachedThread.start {
            ThreadPriority.lowerCurrentThread(toNice: base + 3)
            let fromLowered = Self.runAndWait(on: pool)
            let asked = Self.runAndWait(on: pool, niceAtLeast: base + 5)
            seen.update { $0 = (fromLowered, asked, nil) }
        }
        #expect(eventually { seen.value != nil })
        let fromHigher = Self.runAndWait(on: pool)
        let result = try #require(seen.value)
        #expect(result.fromLowered?.nice == base + 3)
        #expect(result.asked?.nice == base + 5)
        #expect(fromHigher?.nice == base + 5)
        #expect(Self.currentNice() == base)
    }

    @Test func aSerialQueueRunsItsJobsOneAtATimeInOrder() {
        let queue = SerialWorkQueue(on: WorkerPool(maximumThreads: 4))
        let order = Shared<[Int]>([])
        let running = Atomic<Int>(0)
        let overlapped = Atomic<Bool>(false)
        for index in 0..<500 {
            queue.run {
                if running.wrappingAdd(1, ordering: .relaxed).newValue > 1 { overlapped.store(true, ordering: .relaxed) }
                order.update { $0.append(index) }
                running.wrappingSubtract(1, ordering: .relaxed)
            }
        }
        queue.waitUntilIdle()
        #expect(order.value == Array(0..<500))
        let didOverlap = overlapped.load(ordering: .relaxed)
        #expect(!didOverlap)
    }

    @Test(arguments: [0, 1, 2, 3, 1000])
    func parallelForRunsEveryIndexExactlyOnce(iterations: Int) {
        let counts = Shared([Int](repeating: 0, count: iterations))
        WorkerPool(maximumThreads: 4).parallelFor(iterations) { index in counts.update { $0[index] += 1 } }
        #expect(counts.value == [Int](repeating: 1, count: iterations))
    }

    /// With every worker busy, the calling thread does all the work itself rather than wait.
    @Test func parallelForFinishesWhileEveryWorkerIsBusy() {
        let pool = WorkerPool(maximumThreads: 1)
        let release = ConditionLock()
        let released = Shared(false)
        pool.run {
            release.withLock { while !released.value { release.wait() } }
        }
        let threads = Shared<Set<pthread_t>>([])
        pool.parallelFor(100) { _ in threads.update { _ = $0.insert(pthread_self()) } }
        #expect(threads.value == [pthread_self()])
        release.withLock {
            released.update { $0 = true }
            release.broadcast()
        }
    }

    /// Index 0 runs on the calling thread, whichever thread is free first: what it allocates
    /// lands in the caller's malloc arena on every run (proctord's start compiles its policy
    /// there; compiled on a worker, the idle daemon kept ≈ 6 MiB more). On one CPU, a woken
    /// worker pre-empts its caller, which made it take index 0 first in most runs.
    @Test func parallelForRunsTheFirstIndexOnTheCallingThread() {
        Self.onOneCPU {
            let pool = WorkerPool(maximumThreads: 2)
            for _ in 0..<100 {
                let first = Shared<pthread_t?>(nil)
                pool.parallelFor(3) { index in if index == 0 { first.update { $0 = pthread_self() } } }
                #expect(first.value == pthread_self())
            }
        }
    }

    /// What the body captured is released by the time `parallelFor` returns, on the calling
    /// thread: never later by a worker on its way out (a policy freed then was still resident
    /// when proctord had given its free memory back).
    @Test func parallelForReleasesTheBodyBeforeItReturns() {
        final class Captured: Sendable {
            let deinitialized: Shared<pthread_t?>
            init(_ deinitialized: Shared<pthread_t?>) { self.deinitialized = deinitialized }
            deinit { deinitialized.update { $0 = pthread_self() } }
        }
        func body(capturing captured: Captured) -> @Sendable (Int) -> Void {
            { _ in withExtendedLifetime(captured) { _ = usleep(100) } }
        }
        Self.onOneCPU {
            let pool = WorkerPool(maximumThreads: 2)
            for _ in 0..<100 {
                let deinitialized = Shared<pthread_t?>(nil)
                pool.parallelFor(4, body(capturing: Captured(deinitialized)))
                #expect(deinitialized.value == pthread_self())
            }
        }
    }

    /// Runs `body` with the calling thread (and the threads it starts) on its first CPU only.
    static func onOneCPU(_ body: () -> Void) {
        var saved = cpu_set_t()
        _ = withUnsafeMutableBytes(of: &saved) { clinux_get_affinity($0.baseAddress, $0.count) }
        var one = cpu_set_t()
        withUnsafeMutableBytes(of: &one) { bytes in
            let cpu = ThreadPriority.currentCPUs.first ?? 0
            bytes[cpu / 8] = 1 << UInt8(cpu % 8)
            _ = clinux_set_affinity(bytes.baseAddress, bytes.count)
        }
        defer { _ = withUnsafeBytes(of: &saved) { clinux_set_affinity($0.baseAddress, $0.count) } }
        body()
    }

    /// A signal sent to the process never lands on a worker (SIGHUP's default action would end
    /// it); the restricting signal of `Landlock` and those a fault raises still reach it.
    @Test func workersBlockTheSignalsSentToTheProcess() throws {
        let pool = WorkerPool(maximumThreads: 1)
        let started = Shared(false)
        // Started from a thread that blocks nothing (a worker would otherwise inherit the mask
        // of the test's own thread, which Swift's runtime blocks most signals in).
        DetachedThread.start {
            var none = sigset_t()
            sigemptyset(&none)
            pthread_sigmask(SIG_SETMASK, &none, nil)
            _ = Self.runAndWait(on: pool)
            started.update { $0 = true }
        }
        #expect(eventually { started.value })
        let worker = try #require(pool.threadIDs.first)
        let mask = try #require(Self.statusField("SigBlk", of: worker).flatMap { UInt64($0, radix: 16) })
        func isBlocked(_ signal: Int32) -> Bool { mask & (1 << UInt64(signal - 1)) != 0 }
        #expect(isBlocked(SIGTERM) && isBlocked(SIGHUP) && isBlocked(SIGINT) && isBlocked(SIGUSR1))
        #expect(!isBlocked(Landlock.threadSignal) && !isBlocked(SIGSEGV) && !isBlocked(SIGBUS))
    }

    /// An idle worker blocks in the kernel until there is work: in a second and a half it is
    /// never scheduled (libdispatch's pool is, every second).
    @Test func idleWorkersAreNeverWoken() throws {
        let pool = WorkerPool(maximumThreads: 2)
        pool.parallelFor(64) { _ in usleep(1_000) }
        let queue = SerialWorkQueue(on: pool)
        queue.run {}
        queue.waitUntilIdle()
        let workers = pool.threadIDs
        #expect(!workers.isEmpty)
        #expect(eventually { workers.allSatisfy { Self.state(of: $0) == "S" } })
        let before = workers.map(Self.contextSwitches)
        usleep(1_500_000)
        #expect(workers.map(Self.contextSwitches) == before)
    }

    /// The scheduler state letter of thread `id` of this process (`S`: sleeping).
    static func state(of id: pid_t) -> String? {
        statusField("State", of: id).map { String($0.prefix(1)) }
    }

    /// How many times thread `id` gave up or was taken off a CPU so far.
    static func contextSwitches(of id: pid_t) -> String {
        "\(statusField("voluntary_ctxt_switches", of: id) ?? "?")/\(statusField("nonvoluntary_ctxt_switches", of: id) ?? "?")"
    }

    static func statusField(_ name: String, of id: pid_t) -> String? {
        guard let file = fopen("/proc/self/task/\(id)/status", "r") else { return nil }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 512)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if text.hasPrefix(name + ":") {
                return String(text.dropFirst(name.count + 1).filter { !$0.isWhitespace })
            }
        }
        return nil
    }
}
