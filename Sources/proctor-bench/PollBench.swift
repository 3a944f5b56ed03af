import Glibc
import LinuxIO
import ProctorBundle
import ProctorCrypto
import ProctorPolicy
import TestSupport

/// What one unchanged poll of the MDM costs proctord: a real proctord polls a real HTTPS server
/// (Tests/ProctorFleetTests/bundle_server.py, Python's `ssl`, TLS 1.3) every second, and every
/// answer is a 304. The figure is proctord's CPU time (all threads: its process CPU-time
/// clock) from one 304 to the next: the request, the connection, the
/// outcome handed to the loop, and whatever else proctord did in that second. Two servers:
/// - `fleet.poll304.cpu`: the server closes the connection after each answer, as any server does
///   with a client that polls every 300 s (nginx closes idle connections after 75 s): each poll
///   is a new TCP and TLS connection, and the bench checks the server saw it **resume** the TLS
///   session of the poll before (no certificate exchange or verification);
/// - `fleet.poll304.keepalive.cpu`: the server keeps connections open (HTTP/1.1) and the bench
///   checks each poll **reused** the connection: no handshake at all, the lower bound.
enum PollBench: BenchCommand {
    static let name = "poll"
    static let summary = "proctord's CPU time (ms) per unchanged (304) poll over HTTPS, new or kept connection"
    static let serverScript = "Tests/ProctorFleetTests/bundle_server.py"

    static func run(_ options: BenchOptions, report: (Figure) -> Void) throws {
        report(try measure(options, keepAlive: false))
        report(try measure(options, keepAlive: true))
    }

    private static func measure(_ options: BenchOptions, keepAlive: Bool) throws -> Figure {
        let directory = try TemporaryDirectory.make(prefix: "proctor-bench-poll")
        defer { directory.remove() }
        let server = try MDMServer(script: try serverPath(), directory: directory.path + "/mdm", keepAlive: keepAlive)
        defer { server.process.stop() }

        // A signed bundle and its key in keys.d, so the first poll applies it and the rest are 304s.
        try DaemonUnderTest.writePolicy(SyntheticPolicy(appCount: 10).policy, into: directory.path)
        let key = try SigningKeyPair.generate()
        let bundle = SignedBundle.sign(SyntheticPolicy(appCount: 10).policy, serial: 1, issuedAt: Int(time(nil)),
                                       expiresAt: Int(time(nil)) + 86_400, with: key)
        try writeFile(directory.path + "/mdm/bundle", bundle)
        guard mkdir(directory.path + "/config/keys.d", 0o755) == 0 else { throw BenchError("cannot create keys.d") }
        try key.publicKey.save(to: directory.path + "/config/keys.d/bench.pub")
        try server.writeConfiguration(into: directory.path, "BundleURL=https://localhost:\(server.port)/bundle\nPollIntervalSec=1")
        let daemon = try DaemonUnderTest(options: options, directory: directory)
        defer { daemon.process.stop() }

        // Steady state: every poll after the first two goes the way this server makes it go.
        let steady = "GET /bundle 304 " + (keepAlive ? "kept" : "resumed")
        guard try server.next().hasPrefix("GET /bundle 200 ") else { throw BenchError("proctord never fetched the bundle") }
        guard try server.next().hasPrefix("GET /bundle 304 ") else { throw BenchError("the second poll was not a 304") }
        let runs = options.quick ? 5 : 20
        var samples: [Double] = []
        let accountBefore = try ProcessAccount(daemon.process.pid)
        var before = try cpuNanoseconds(of: daemon.process.pid)
        for _ in 0..<runs {
            let line = try server.next()
            guard line == steady else { throw BenchError("expected \"\(steady)\" from the server, got \"\(line)\"") }
            usleep(200_000)  // proctord handles the answer after the server sent it
            let after = try cpuNanoseconds(of: daemon.process.pid)
            samples.append(Double(after - before) / 1_000_000)
            before = after
        }
        let name = keepAlive ? "fleet.poll304.keepalive.cpu" : "fleet.poll304.cpu"
        let account = try ProcessAccount(daemon.process.pid)
        let note = Array("\(name): where the CPU time went, \(account.since(accountBefore, polls: runs))\n".utf8)
        _ = note.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }  // beside the table, not in it
        return Figure(name: name, unit: "ms", samples: samples)
    }

    /// proctord's CPU time so far, in nanoseconds: its process CPU-time clock
    /// (`clock_getcpuclockid`), which counts every thread, those that already ended included
    /// (libcurl's resolver threads) — a sum over `/proc/PID/task` would lose them, and could
    /// even go backwards.
    static func cpuNanoseconds(of pid: pid_t) throws(BenchError) -> UInt64 {
        var clock = clockid_t()
        var now = timespec()
        guard clock_getcpuclockid(pid, &clock) == 0, clock_gettime(clock, &now) == 0 else {
            throw BenchError("cannot read the CPU time of pid \(pid)")
        }
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// bundle_server.py: beside the checkout's build folder (walking up from this executable),
    /// or in the current directory.
    static func serverPath() throws(BenchError) -> String {
        var folder = try BenchDaemonWorkload.executablePath()
        while let slash = folder.lastIndex(of: "/"), slash != folder.startIndex {
            folder = String(folder[..<slash])
            if access(folder + "/" + serverScript, R_OK) == 0 { return folder + "/" + serverScript }
        }
        guard access(serverScript, R_OK) == 0 else { throw BenchError("cannot find \(serverScript)") }
        return serverScript
    }
}

/// What proctord's clock counts, for telling apart a costlier poll from a costlier machine:
/// user and system time and page faults of the whole process (/proc/PID/stat: ended threads
/// included, times in clock ticks), and the CPU time of each live thread
/// (/proc/PID/task/TID/schedstat, nanoseconds).
private struct ProcessAccount {
    var userTicks = 0, systemTicks = 0, minorFaults = 0, majorFaults = 0
    var threads: [String: UInt64] = [:]

    init(_ pid: pid_t) throws(BenchError) {
        // Fields after the command name, which is in parentheses and may hold spaces.
        let stat = try readTextFile("/proc/\(pid)/stat")
        guard let close = stat.lastIndex(of: ")") else { throw BenchError("unexpected /proc/\(pid)/stat") }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state): minflt is field 10, majflt 12, utime 14, stime 15.
        guard fields.count > 12, let minor = Int(fields[7]), let major = Int(fields[9]),
              let user = Int(fields[11]), let system = Int(fields[12]) else {
            throw BenchError("unexpected /proc/\(pid)/stat")
        }
        (minorFaults, majorFaults, userTicks, systemTicks) = (minor, major, user, system)
        for thread in (try? Directory.entryNames("/proc/\(pid)/task")) ?? [] {
            let line = (try? readTextFile("/proc/\(pid)/task/\(thread)/schedstat")) ?? ""
            if let nanoseconds = line.split(separator: " ").first.flatMap({ UInt64($0) }) { threads[thread] = nanoseconds }
        }
    }

    /// Per poll since `earlier`: the busiest live thread's CPU time, the share of system time,
    /// and page faults.
    func since(_ earlier: ProcessAccount, polls: Int) -> String {
        // A thread id seen before with more time is a new thread that reused the id.
        let busiest = threads.map { tid, now in now - min(now, earlier.threads[tid] ?? 0) }.max() ?? 0
        let user = userTicks - earlier.userTicks, system = systemTicks - earlier.systemTicks
        let perPoll = { (count: Int) in String(Double(count * 10 / polls) / 10) }
        return "per poll: the busiest thread \(Double(busiest / UInt64(polls) / 10_000) / 100) ms; "
            + (user + system == 0 ? "" : "system time \(system * 100 / (user + system)) % of \(user + system) ticks; ")
            + "page faults \(perPoll(minorFaults - earlier.minorFaults)) minor, \(perPoll(majorFaults - earlier.majorFaults)) major"
    }
}

/// bundle_server.py with `--trace`: one line on its standard output per request answered,
/// `<method> <path> <status> <full|resumed|kept>`.
final class MDMServer {
    let process: Subprocess
    private(set) var port = 0
    private let output: CInt
    private var pending: [UInt8] = []

    init(script: String, directory: String, keepAlive: Bool) throws(BenchError) {
        guard mkdir(directory, 0o755) == 0 else { throw BenchError("cannot create \(directory)") }
        var ends: [CInt] = [0, 0]
        guard pipe(&ends) == 0 else { throw BenchError("pipe failed: \(String(cString: strerror(errno)))") }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }  // the child's stdout is a dup2, without it
        output = ends[0]
        do {
            process = try Subprocess.spawn("/usr/bin/python3", [script, "--trace"] + (keepAlive ? ["--keep-alive"] : []) + [directory], environment: ["PATH=/usr/bin:/bin"],
                                           redirect: [(ends[1], 1)])
        } catch {
            close(ends[0])
            close(ends[1])
            throw error
        }
        close(ends[1])
        let ready = (try? readLine())?.split(separator: " ") ?? []
        guard ready.count == 3, ready[0] == "READY", let port = Int(ready[1]) else {
            process.stop()
            throw BenchError("\(script) did not start (python3 with its ssl module is needed)")
        }
        self.port = port
    }

    deinit { close(output) }

    /// Writes `config/proctord.conf` into `directory` (the server's own being `directory/mdm`):
    /// `[Source]` with `settings` and this server's CA.
    func writeConfiguration(into directory: String, _ settings: String) throws(BenchError) {
        try writeFile(directory + "/config/proctord.conf",
                      Array("[Source]\n\(settings)\nCACertificate=\(directory)/mdm/ca.pem\n".utf8))
    }

    /// The next request line; throws if the server stopped talking.
    func next() throws(BenchError) -> String {
        guard let line = try readLine() else { throw BenchError("bundle_server.py stopped") }
        return line
    }

    /// The next line, waiting at most 30 s for it (nil: the output ended).
    private func readLine() throws(BenchError) -> String? {
        while true {
            if let newline = pending.firstIndex(of: 10) {
                defer { pending.removeSubrange(...newline) }
                return String(decoding: pending[..<newline], as: UTF8.self)
            }
            var waiting = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            guard poll(&waiting, 1, 30_000) == 1 else { throw BenchError("bundle_server.py said nothing for 30 s") }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            pending += chunk[..<count]
        }
    }
}
