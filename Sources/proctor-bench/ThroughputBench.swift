import LinuxIO
import Glibc
import Synchronization

/// Decisions per second with 1, 8 and 64 concurrent clients, each on its own connection
/// and thread, pipelining: a client writes a window of `Decide` calls in one `write`, then
/// reads until every reply of the window has arrived. Samples are the rate over
/// consecutive 100 ms intervals after a warm-up.
enum ThroughputBench: BenchCommand {
    static let name = "throughput"
    static let summary = "Decide over Varlink per second with 1, 8 and 64 pipelining clients"
    static let clientCounts = [1, 8, 64]
    static let window = 32
    static let intervalNanoseconds: UInt64 = 100_000_000

    static func run(_ options: BenchOptions, report: (Figure) -> Void) throws {
        let workload = try BenchDaemonWorkload()
        let daemon = try DaemonUnderTest(options: options, policy: workload.policy)
        defer { daemon.stop() }
        for clients in clientCounts {
            report(Figure(name: "throughput.clients\(clients)", unit: "/s",
                          samples: try measure(clients: clients, workload: workload, daemon: daemon, options: options)))
        }
    }

    private static func measure(clients: Int, workload: BenchDaemonWorkload, daemon: DaemonUnderTest,
                                options: BenchOptions) throws -> [Double] {
        // Connect and register every client before any starts, so all run for the whole time.
        var batches: [(MessageConnection, [UInt8])] = []
        for _ in 0..<clients {
            let connection = try MessageConnection(path: daemon.agentPath)
            let calls = workload.decideCalls(session: try BenchDaemonWorkload.register(connection), count: window)
            batches.append((connection, calls.flatMap { $0 }))
        }
        let shared = SharedCounters()
        var threads: [BenchThread] = []
        for (connection, batch) in batches {
            let client = PipeliningClient(connection: connection, batch: batch)
            threads.append(try BenchThread { client.run(shared) })
        }
        let intervals = options.quick ? 5 : 20
        usleep(200_000)
        var samples: [Double] = []
        var last = shared.completed.load(ordering: .relaxed)
        var lastTime = MonotonicClock.nanoseconds()
        for _ in 0..<intervals {
            usleep(UInt32(intervalNanoseconds / 1_000))
            let count = shared.completed.load(ordering: .relaxed)
            let now = MonotonicClock.nanoseconds()
            samples.append(Double(count - last) * 1e9 / Double(now - lastTime))
            (last, lastTime) = (count, now)
        }
        shared.stopping.store(true, ordering: .relaxed)
        threads.forEach { $0.join() }
        if let failure = shared.failures.withLock({ $0.first }) { throw BenchError("a throughput client failed: \(failure)") }
        return samples
    }
}

/// What the client threads share with the sampling thread.
final class SharedCounters: Sendable {
    let completed = Atomic<Int>(0)
    let stopping = Atomic<Bool>(false)
    let failures = Mutex<[String]>([])
}

/// One client thread's loop; the connection is used by this thread only.
struct PipeliningClient: @unchecked Sendable {
    let connection: MessageConnection
    let batch: [UInt8]

    func run(_ shared: SharedCounters) {
        do {
            while !shared.stopping.load(ordering: .relaxed) {
                try connection.send(batch)
                try connection.skipMessages(ThroughputBench.window, pollFirst: false)
                shared.completed.add(ThroughputBench.window, ordering: .relaxed)
            }
        } catch {
            shared.failures.withLock { $0.append("\(error)") }
        }
    }
}
