import Glibc
import ProctorStore
import TestSupport

/// What one fleet status report costs the clients of proctord: a real proctord with
/// `StatusURL=` on a local HTTPS server (bundle_server.py) and `StatusIntervalSec=1`, its
/// policy naming N apps that have all registered once (their rows written into `state.db`
/// before it starts), and a registered session sending `Decide` every 100 µs (`Pinger`, as
/// `reload`). A run is the window between two POSTs the server received: it holds the
/// building of one document, and its figure is the longest round trip of the session then.
/// `fleet.statusReport.appsN.bytes` is the size of the document POSTed.
enum StatusReportBench: BenchCommand {
    static let name = "status"
    static let summary = "a fleet status report of 10 000 known apps: longest client pause (ms), size (B)"
    static let appCount = 10_000

    static func run(_ options: BenchOptions, report: (Figure) -> Void) throws {
        let (pauses, bytes) = try measure(options, appCount: appCount)
        report(Figure(name: "fleet.statusReport.apps\(appCount).longestPause", unit: "ms", samples: pauses))
        report(Figure(name: "fleet.statusReport.apps\(appCount).bytes", unit: "B", samples: bytes))
    }

    private static func measure(_ options: BenchOptions, appCount: Int) throws -> (pauses: [Double], bytes: [Double]) {
        let directory = try TemporaryDirectory.make(prefix: "proctor-bench-status")
        defer { directory.remove() }
        let server = try MDMServer(script: try PollBench.serverPath(), directory: directory.path + "/mdm", keepAlive: false)
        defer { server.process.stop() }
        let workload = try BenchDaemonWorkload(appCount: appCount)
        try DaemonUnderTest.writePolicy(workload.policy, into: directory.path)
        try registerOnce(workload.policy.apps.keys.sorted(), stateDirectory: directory.path + "/state")
        try server.writeConfiguration(into: directory.path, "StatusURL=https://localhost:\(server.port)/report\nStatusIntervalSec=1")
        let daemon = try DaemonUnderTest(options: options, directory: directory)
        defer { daemon.process.stop() }

        _ = try nextReport(server)  // the one sent at start
        var pauses: [Double] = [], bytes: [Double] = []
        for _ in 0..<(options.quick ? 2 : 6) {
            let pinger = try Pinger(path: daemon.agentPath, workload: workload)
            bytes.append(Double(try nextReport(server)))
            pauses.append(Double(try pinger.stop().nanoseconds) / 1_000_000)
        }
        return (pauses, bytes)
    }

    /// Records one registration for each of `appIDs` in `state.db`, as their first Register would.
    private static func registerOnce(_ appIDs: [String], stateDirectory: String) throws(BenchError) {
        do {
            let store = try StateStore.open(directory: stateDirectory)
            defer { store.close() }
            let now = StateStore.currentTime()
            for appID in appIDs {
                try store.recordRegistration(appID: appID, at: now, appVersion: "2.5.0", pid: 4242, uid: 1000)
            }
        } catch {
            throw BenchError("cannot write the registrations into \(stateDirectory)/state.db: \(error)")
        }
    }

    /// The size of the next status document the server received.
    private static func nextReport(_ server: MDMServer) throws(BenchError) -> Int {
        while true {
            let fields = try server.next().split(separator: " ")
            if fields.count == 5, fields[0] == "POST", fields[1] == "/report", let size = Int(fields[4]) { return size }
        }
    }
}
