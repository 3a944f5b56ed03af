import Glibc
import JSONCore
import LinuxIO
import Synchronization

/// A reload of a 100 000-app `policy.d` while an app keeps asking: `Admin.Reload` after a
/// new version was written, timed until its reply (the new policy is in force then), and the
/// longest round trip of a registered session that sends `Decide` every 100 µs meanwhile —
/// the longest the event loop left a client waiting while the new policy was read and compiled.
enum ReloadBench: BenchCommand {
    static let name = "reload"
    static let summary = "reload of a 100 000-app policy.d: longest client pause and time until in force (ms)"
    static let appCount = 100_000

    static func run(_ options: BenchOptions, report: (Figure) -> Void) throws {
        let workload = try BenchDaemonWorkload(appCount: appCount)
        var policy = workload.policy
        let daemon = try DaemonUnderTest(options: options, policy: policy)
        defer { daemon.stop() }
        let admin = try MessageConnection(path: daemon.adminPath)
        var pauses: [Double] = [], inForce: [Double] = [], when: [String] = []
        for run in 0..<(options.quick ? 2 : 6) {
            policy.version = "bench-reload-\(run)"
            try DaemonUnderTest.writePolicy(policy, into: daemon.directory.path)
            let pinger = try Pinger(path: daemon.agentPath, workload: workload)
            let began = MonotonicClock.nanoseconds()
            let reply = try admin.call("io.proctor.Admin.Reload")
            let took = MonotonicClock.nanoseconds() - began
            inForce.append(Double(took) / 1_000_000)
            let (longest, longestBegan) = try pinger.stop()
            guard reply["result"]?["ok"]?.boolValue == true, reply["policy"]?["version"]?.stringValue == policy.version else {
                throw BenchError("Reload did not put \(policy.version) in force: \(reply.serializedString())")
            }
            pauses.append(Double(longest) / 1_000_000)
            let offset = Int64(bitPattern: longestBegan &- began)  // negative: begun before the request went
            when.append("\(milliseconds(longest)) at \(offset < 0 ? "-" : "+")\(milliseconds(offset.magnitude)) of \(milliseconds(took))")
        }
        // Beside the table, not in it: when in each reload its longest pause began — one just
        // before the reply is the swap on the loop, an earlier one came while workers read and
        // compiled — for whoever examines that figure next.
        BenchCommandLine.printError("reload.apps\(appCount).longestPause: the longest pause of each reload, "
                                    + "at its start from the reload's, in ms: " + when.joined(separator: "; "))
        report(Figure(name: "reload.apps\(appCount).longestPause", unit: "ms", samples: pauses))
        report(Figure(name: "reload.apps\(appCount).inForce", unit: "ms", samples: inForce))
    }
}

/// A thread that sends `Decide` round trips as a registered app on its own connection (an
/// unregistered one would be closed), 100 µs apart, until stopped, and keeps the longest.
final class Pinger: Sendable {
    private let stopping = Atomic<Bool>(false)
    private let longest = Atomic<UInt64>(0)
    /// When the longest round trip began (`MonotonicClock`).
    private let longestBegan = Atomic<UInt64>(0)
    private let failed = Atomic<Bool>(false)
    private let thread: Mutex<BenchThread?> = Mutex(nil)

    init(path: String, workload: BenchDaemonWorkload) throws(BenchError) {
        let connection = try MessageConnection(path: path)
        let call = workload.decideCalls(session: try BenchDaemonWorkload.register(connection), count: 1)[0]
        // One round trip first, so the figure never includes connecting.
        try connection.send(call)
        _ = try connection.receive()
        let transfer = UncheckedBox(connection)
        let started = try BenchThread { [self] in
            let connection = transfer.value
            while !stopping.load(ordering: .relaxed) {
                let began = MonotonicClock.nanoseconds()
                do {
                    try connection.send(call)
                    _ = try connection.receive()
                } catch {
                    failed.store(true, ordering: .relaxed)
                    return
                }
                let took = MonotonicClock.nanoseconds() - began
                if took > longest.load(ordering: .relaxed) {
                    longest.store(took, ordering: .relaxed)
                    longestBegan.store(began, ordering: .relaxed)
                }
                usleep(100)
            }
        }
        thread.withLock { $0 = started }
    }

    /// Stops the thread and returns the longest round trip in nanoseconds and when it began.
    func stop() throws(BenchError) -> (nanoseconds: UInt64, began: UInt64) {
        stopping.store(true, ordering: .relaxed)
        thread.withLock { $0?.join() }
        guard !failed.load(ordering: .relaxed) else { throw BenchError("the Decide connection failed during the reload") }
        return (longest.load(ordering: .relaxed), longestBegan.load(ordering: .relaxed))
    }
}

/// Nanoseconds as milliseconds with two decimals.
private func milliseconds(_ nanoseconds: UInt64) -> String {
    String(Double(nanoseconds / 10_000) / 100)
}

/// Hands a value made on one thread to another that alone uses it from then on.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
