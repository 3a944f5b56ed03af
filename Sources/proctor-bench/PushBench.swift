import LinuxIO
import Glibc
import JSONCore
import ProctorPolicy

/// Push latency: 1 000 sessions of one app, each on its own connection with a `Subscribe`
/// call open; then `Admin.ApplyPolicy` with a policy that changes that app's managed config.
/// A sample is the time from sending ApplyPolicy to the moment the last of the 1 000
/// connections has its Subscribe reply, watched with poll(2). Pushed documents: the whole
/// 1 000-app policy (`push.sessions1000`), and only the changed app's entry
/// (`….oneAppDocument`, overlaying `policy.d`), which separates the cost of reading a big
/// document from that of the fan-out.
enum PushBench: BenchCommand {
    static let name = "push"
    static let summary = "ApplyPolicy until 1 000 subscribed sessions have their update (ms)"
    static let sessions = 1_000

    static func run(_ options: BenchOptions, report: (Figure) -> Void) throws {
        var workload = try BenchDaemonWorkload()
        let daemon = try DaemonUnderTest(options: options, policy: workload.policy)
        defer { daemon.stop() }
        var subscribers: [MessageConnection] = []
        for _ in 0..<sessions {
            let connection = try MessageConnection(path: daemon.agentPath)
            let session = try BenchDaemonWorkload.register(connection)
            let first = try connection.call("io.proctor.Agent.Subscribe", ["session": .string(session)], more: true)
            guard first["reason"]?.stringValue == "current" else { throw BenchError("Subscribe: first reply is not the current state") }
            subscribers.append(connection)
        }
        let admin = try MessageConnection(path: daemon.adminPath)
        var pollSet = subscribers.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        defer { scratch.deallocate() }

        let rounds = options.quick ? 3 : 15
        for whole in [true, false] {
            var samples: [Double] = []
            for round in 0..<rounds {
                workload.policy.version = "bench-push-\(whole ? "all" : "one")-\(round)"
                workload.policy.apps[BenchDaemonWorkload.appID]?.config = ["pushRound": .number(round)]
                let pushed = whole ? workload.policy : Policy(version: workload.policy.version, defaults: AppSettings(),
                    apps: [BenchDaemonWorkload.appID: workload.policy.apps[BenchDaemonWorkload.appID]!])
                samples.append(try push(pushed, admin: admin, pollSet: &pollSet, scratch: scratch))
            }
            report(Figure(name: "push.sessions\(sessions)" + (whole ? "" : ".oneAppDocument"), unit: "ms", samples: samples))
        }
        _ = subscribers
    }

    /// Milliseconds from sending ApplyPolicy with `policy` until every subscriber has an update.
    private static func push(_ policy: Policy, admin: MessageConnection, pollSet: inout [pollfd],
                             scratch: UnsafeMutableRawBufferPointer) throws -> Double {
        let call = MessageConnection.encode("io.proctor.Admin.ApplyPolicy", ["policy": policy.canonicalJSON])

        let began = MonotonicClock.nanoseconds()
        try admin.send(call)
        var waiting = sessions
        var done = [Bool](repeating: false, count: sessions)
        while waiting > 0 {
            guard poll(&pollSet, nfds_t(pollSet.count), 10_000) > 0 else {
                throw BenchError("push: \(waiting) sessions had no update 10 s after ApplyPolicy")
            }
            for index in pollSet.indices where pollSet[index].revents != 0 {
                pollSet[index].revents = 0
                let got = read(pollSet[index].fd, scratch.baseAddress, scratch.count)
                guard got > 0 else { throw BenchError("push: proctord closed a subscriber connection") }
                // One update per round; the NUL ends it (an update is never split across rounds).
                if !done[index] && scratch[got - 1] == 0 {
                    done[index] = true
                    waiting -= 1
                }
            }
        }
        let milliseconds = Double(MonotonicClock.nanoseconds() - began) / 1_000_000
        let reply = try MessageConnection.parameters(of: admin.receive(), method: "ApplyPolicy")
        guard reply["version"]?.stringValue == policy.version else {
            throw BenchError("ApplyPolicy did not put \(policy.version) in force: \(reply.serializedString())")
        }
        return milliseconds
    }
}
