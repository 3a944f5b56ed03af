import LinuxIO
import ProctorPolicy

/// In-process decision cost: batches of mixed requests, timed per batch and divided by the
/// batch size, at several policy sizes. Two workloads per size: `decide.appsN`, where the
/// asking app is uniformly random over all N apps (every decision starts cold in the cache:
/// the worst case), and `decide.appsN.active64`, where 64 apps do the asking (targets still
/// range over all N apps), as on a machine running a few dozen managed apps.
enum DecideBench: BenchCommand {
    static let name = "decide"
    static let summary = "in-process decision cost (ns) at 10, 1 000, 10 000 and 100 000 apps"
    static let appCounts = [10, 1_000, 10_000, 100_000]
    static let batchSize = 1_000
    static let activeApps = 64

    static func run(_ options: BenchOptions, report: (Figure) -> Void) throws {
        let batches = options.quick ? 200 : 3_000
        var checksum = 0
        for appCount in appCounts {
            let synthetic = SyntheticPolicy(appCount: appCount)
            let engine = CompiledPolicy(synthetic.policy)
            for active in [nil, activeApps] where active == nil || active! < appCount {
                // A pool larger than the caches at the big sizes, walked batch by batch.
                let pool = synthetic.requests(count: batchSize * 64, seed: UInt64(appCount), activeApps: active)
                let name = "decide.apps\(appCount)" + (active.map { ".active\($0)" } ?? "")
                report(Figure(name: name, unit: "ns", samples: measure(engine, pool, batches: batches, checksum: &checksum)))
            }
        }
        // Keeps the optimiser from discarding the decisions; never true in practice.
        if checksum == Int.min { print(checksum) }
    }

    /// Nanoseconds per decision of each batch.
    private static func measure(_ engine: CompiledPolicy, _ pool: [DecisionRequest], batches: Int,
                                checksum: inout Int) -> [Double] {
        for request in pool.prefix(batchSize * 4) { checksum &+= engine.engineDecision(for: request).allowed ? 1 : 0 }
        var samples: [Double] = []
        samples.reserveCapacity(batches)
        // Each denial's rule is rendered, as proctord renders it into its reply and log line:
        // into a buffer that is reused, as a connection's output buffer is.
        var ruleBytes: [UInt8] = []
        ruleBytes.reserveCapacity(1024)
        var pool = pool
        pool.withUnsafeMutableBufferPointer { pool in
            let requests = pool.baseAddress!
            for batch in 0..<batches {
                let start = (batch % 64) * batchSize
                let began = MonotonicClock.nanoseconds()
                for index in start..<(start + batchSize) {
                    // Moved out and back rather than copied: a copy of the request (a retain
                    // and release of each of its strings) is the bench's cost, not the engine's.
                    let request = (requests + index).move()
                    // As proctord decides: the engine's decision, its rule rendered with the
                    // asking app's id, which the caller holds (its session's; here the request's).
                    let decision = engine.engineDecision(for: request)
                    if decision.allowed {
                        checksum &+= 1
                    } else {
                        ruleBytes.removeAll(keepingCapacity: true)
                        decision.appendRule(to: &ruleBytes, askingApp: request.app)
                        checksum &+= ruleBytes.count
                    }
                    (requests + index).initialize(to: request)
                }
                samples.append(Double(MonotonicClock.nanoseconds() - began) / Double(batchSize))
            }
        }
        return samples
    }
}
