import Glibc
import ProctorPolicy
import TestSupport

/// Start → READY: `posix_spawn` of proctord until `READY=1` arrives on the notify socket the
/// bench listens on, with a 10 000-app `policy.d` (state and runtime directories kept
/// between runs, as across restarts of a service), with a 100 000-app one (the most a policy
/// may have) — and with 10 apps, which shows the cost that does not depend on the policy
/// (loading libraries, opening SQLite, binding sockets). The first start on a policy reads,
/// parses and compiles its JSON and writes the policy snapshot that the later ones read
/// instead (docs/state.md): `startup.appsN` are restarts. `startup.appsN.noSnapshot`
/// (information, no goal) are starts with the snapshot removed before each: what a start
/// costs after the policy changed, or the first ever.
enum StartupBench: BenchCommand {
    static let name = "startup"
    static let summary = "exec of proctord to READY=1 with a 10-, a 10 000- and a 100 000-app policy (ms)"
    static let appCounts = [10, 10_000, 100_000]

    static func run(_ options: BenchOptions, report: (Figure) -> Void) throws {
        for appCount in appCounts {
            for figure in try measure(appCount: appCount, options: options) { report(figure) }
        }
    }

    private static func measure(appCount: Int, options: BenchOptions) throws -> [Figure] {
        let workload = try BenchDaemonWorkload(appCount: appCount)
        let directory = try TemporaryDirectory.make(prefix: "proctor-bench-start")
        defer { directory.remove() }
        try DaemonUnderTest.writePolicy(workload.policy, into: directory.path)
        // A service restarts long after its policy files were written; files changed within
        // the last seconds cannot key proctord's policy snapshot (`PolicyDirectoryIdentity`).
        sleep(UInt32(PolicyDirectoryIdentity.settleSeconds) + 1)
        let runs = options.quick ? 3 : appCount > 10_000 ? 5 : 10
        func starts(removingSnapshot: Bool) throws -> [Double] {
            var samples: [Double] = []
            for _ in 0..<runs {
                if removingSnapshot { unlink(directory.path + "/state/policy.snapshot") }
                let daemon = try DaemonUnderTest(options: options, directory: directory)
                samples.append(Double(daemon.startNanoseconds) / 1_000_000)
                daemon.process.stop()
            }
            return samples
        }
        let fromJSON = appCount >= 10_000 ? try starts(removingSnapshot: true) : []
        // The last of those wrote the snapshot (a stop waits for it) that these read.
        var figures = [Figure(name: "startup.apps\(appCount)", unit: "ms", samples: try starts(removingSnapshot: false))]
        if !fromJSON.isEmpty { figures.append(Figure(name: "startup.apps\(appCount).noSnapshot", unit: "ms", samples: fromJSON)) }
        return figures
    }
}
