import Glibc

/// proctord's resident memory (VmRSS) idle with a 10-app, the bench's 1 000-app and a
/// 100 000-app policy, and with 10 000 idle client connections open, before and after each has
/// been answered once; the difference per connection. `RssAnon` is
/// reported beside the idle VmRSS: the rest is pages of shared libraries, which other
/// processes share. The bench raises its own RLIMIT_NOFILE (proctord inherits it) and
/// passes `--max-connections`.
enum MemoryBench: BenchCommand {
    static let name = "memory"
    static let summary = "proctord RSS idle (MiB) and per idle connection (bytes) at 10 000"
    static let connections = 10_000

    static func run(_ options: BenchOptions, report: (Figure) -> Void) throws {
        try raiseDescriptorLimit(to: connections + 1_000)
        let small = try DaemonUnderTest(options: options, policy: try BenchDaemonWorkload(appCount: 10).policy)
        let (smallIdle, _) = try idleResidentBytes(small)
        small.stop()
        report(Figure(name: "memory.idle.apps10", unit: "MiB", samples: [Double(smallIdle) / 1_048_576]))
        let large = try DaemonUnderTest(options: options, policy: try BenchDaemonWorkload(appCount: 100_000).policy)
        let (largeIdle, largeAnonymous) = try idleResidentBytes(large)
        large.stop()
        report(Figure(name: "memory.idle.apps100000", unit: "MiB", samples: [Double(largeIdle) / 1_048_576]))
        report(Figure(name: "memory.idle.apps100000.anonymous", unit: "MiB", samples: [Double(largeAnonymous) / 1_048_576]))

        let workload = try BenchDaemonWorkload()
        let daemon = try DaemonUnderTest(options: options, policy: workload.policy,
                                         extraArguments: ["--max-connections", String(connections + 100)])
        defer { daemon.stop() }
        let (idle, idleAnonymous) = try idleResidentBytes(daemon)

        var open: [MessageConnection] = []
        open.reserveCapacity(connections)
        for _ in 0..<connections { open.append(try MessageConnection(path: daemon.agentPath)) }
        // The daemon accepts in order: once the last connection is answered, all are accepted.
        _ = try open[open.count - 1].call("org.varlink.service.GetInfo")
        usleep(100_000)
        let loaded = try daemon.process.residentBytes()
        report(Figure(name: "memory.idle.apps\(BenchDaemonWorkload.appCount)", unit: "MiB", samples: [Double(idle) / 1_048_576]))
        report(Figure(name: "memory.idle.apps\(BenchDaemonWorkload.appCount).anonymous", unit: "MiB",
                      samples: [Double(idleAnonymous) / 1_048_576]))
        report(Figure(name: "memory.connections\(connections)", unit: "MiB", samples: [Double(loaded) / 1_048_576]))
        report(Figure(name: "memory.perConnection", unit: "B", samples: [Double(loaded - idle) / Double(connections)]))

        // The same connections once each has been answered: what a connection keeps after
        // its first reply (its output buffer), which an app's connection always has.
        for connection in open { _ = try connection.call("org.varlink.service.GetInfo") }
        usleep(100_000)
        let answered = try daemon.process.residentBytes()
        report(Figure(name: "memory.perConnection.answered", unit: "B", samples: [Double(answered - idle) / Double(connections)]))
    }

    /// VmRSS and RssAnon after one round trip (so the figure includes what serving a call
    /// leaves behind) and a moment of quiet.
    private static func idleResidentBytes(_ daemon: DaemonUnderTest) throws -> (Int, Int) {
        _ = try MessageConnection(path: daemon.agentPath).call("org.varlink.service.GetInfo")
        usleep(100_000)
        return (try daemon.process.residentBytes(), try daemon.process.residentBytes(field: "RssAnon"))
    }

    static func raiseDescriptorLimit(to wanted: Int) throws(BenchError) {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        guard limit.rlim_cur < rlim_t(wanted) else { return }
        guard limit.rlim_max >= rlim_t(wanted) else {
            throw BenchError("the memory figure needs \(wanted) descriptors; the hard limit is \(limit.rlim_max)")
        }
        limit.rlim_cur = rlim_t(wanted)
        guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else {
            throw BenchError("setrlimit(RLIMIT_NOFILE, \(wanted)) failed: \(String(cString: strerror(errno)))")
        }
    }
}
