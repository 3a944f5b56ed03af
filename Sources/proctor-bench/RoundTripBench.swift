import LinuxIO
import Glibc

/// One client's `Decide` round trip to a real proctord, beside the socket floor: a raw
/// AF_UNIX stream ping-pong of the same sizes (the average `Decide` call and reply) with a
/// second process that only echoes, blocking I/O on both sides, each read after a
/// `poll(POLLIN)` as the SDK's `VarlinkClient` waits for replies. The mixed workload's calls
/// (about half denied; proctord logs every denial) and, separately, only its calls that
/// are allowed (nothing logged at the default level) show what logging a denial costs.
/// All three are measured in alternating blocks, so drift on a shared machine hits them alike.
enum RoundTripBench: BenchCommand {
    static let name = "roundtrip"
    static let summary = "socket floor and Decide over Varlink (µs), one client, interleaved"
    static let block = 500

    static func run(_ options: BenchOptions, report: (Figure) -> Void) throws {
        let workload = try BenchDaemonWorkload()
        let daemon = try DaemonUnderTest(options: options, policy: workload.policy)
        defer { daemon.stop() }
        let connection = try MessageConnection(path: daemon.agentPath)
        let session = try BenchDaemonWorkload.register(connection)
        let calls = workload.decideCalls(session: session, count: 1_000)

        // Warm-up, the sizes the floor echoes, and which calls are allowed.
        var replyBytes = 0
        var allowedCalls: [[UInt8]] = []
        for call in calls {
            try connection.send(call)
            let reply = try connection.receive()
            replyBytes += reply.count + 1
            if try MessageConnection.parameters(of: reply, method: "Decide")["allowed"] == .bool(true) { allowedCalls.append(call) }
        }
        guard !allowedCalls.isEmpty else { throw BenchError("roundtrip: the workload has no allowed Decide call") }
        let requestSize = calls.reduce(0) { $0 + $1.count } / calls.count
        let replySize = replyBytes / calls.count
        let floor = try EchoPeer(options: options, requestSize: requestSize, replySize: replySize)
        defer { floor.stop() }

        let rounds = options.quick ? 4 : 40
        var floorSamples: [Double] = [], decideSamples: [Double] = [], allowedSamples: [Double] = []
        for round in 0..<rounds {
            for _ in 0..<block {
                let began = MonotonicClock.nanoseconds()
                try floor.roundTrip()
                floorSamples.append(Double(MonotonicClock.nanoseconds() - began) / 1_000)
            }
            try measure(connection, calls, from: round * block, into: &decideSamples)
            try measure(connection, allowedCalls, from: round * block, into: &allowedSamples)
        }
        report(Figure(name: "socket.floor.\(requestSize)B/\(replySize)B", unit: "µs", samples: floorSamples))
        report(Figure(name: "varlink.decide", unit: "µs", samples: decideSamples))
        report(Figure(name: "varlink.decide.allowedOnly", unit: "µs", samples: allowedSamples))
    }

    /// One block of round trips over `calls`, cycling from `start`.
    private static func measure(_ connection: MessageConnection, _ calls: [[UInt8]], from start: Int,
                                into samples: inout [Double]) throws {
        for index in start..<(start + block) {
            let call = calls[index % calls.count]
            let began = MonotonicClock.nanoseconds()
            try connection.send(call)
            try connection.skipMessages(1)
            samples.append(Double(MonotonicClock.nanoseconds() - began) / 1_000)
        }
    }
}

/// The other end of the socket floor: a child process (this executable, `--echo-peer`) that
/// reads `requestSize` bytes and answers `replySize` bytes until the socket closes.
struct EchoPeer {
    static let argument = "--echo-peer"
    let fd: CInt
    let process: Subprocess
    let request: [UInt8]
    let replySize: Int
    /// Where replies are read to; allocated once so a round trip allocates nothing.
    let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)

    init(options: BenchOptions, requestSize: Int, replySize: Int) throws(BenchError) {
        var pair: [CInt] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw BenchError("socketpair failed: \(String(cString: strerror(errno)))")
        }
        defer { close(pair[1]) }
        fd = pair[0]
        process = try Subprocess.spawn(try BenchDaemonWorkload.executablePath(),
                                       [Self.argument, String(requestSize), String(replySize)],
                                       environment: [], redirect: [(ours: pair[1], theirs: 0)], cpu: options.peerCPU)
        request = [UInt8](repeating: 0x61, count: requestSize)
        self.replySize = replySize
    }

    func roundTrip() throws(BenchError) {
        try MessageConnection.writeAll(fd, request)
        try Self.readExactly(fd, replySize, into: scratch)
    }

    func stop() {
        close(fd)
        process.stop()
        scratch.deallocate()
    }

    /// The child's loop on standard input; returns its exit status.
    static func serve(requestSize: Int, replySize: Int) -> Int32 {
        let answer = [UInt8](repeating: 0x62, count: replySize)
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        defer { scratch.deallocate() }
        do {
            while true {
                try readExactly(0, requestSize, into: scratch)
                try MessageConnection.writeAll(0, answer)
            }
        } catch {
            return 0
        }
    }

    static func readExactly(_ fd: CInt, _ count: Int, into scratch: UnsafeMutableRawBufferPointer) throws(BenchError) {
        var remaining = count
        while remaining > 0 {
            try MessageConnection.waitUntilReadable(fd)
            let got = read(fd, scratch.baseAddress, min(remaining, scratch.count))
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { throw BenchError("echo peer closed the socket") }
            remaining -= got
        }
    }
}
