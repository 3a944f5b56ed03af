import CLinux
import Glibc
import LinuxIO

/// One client's `Decide` round trip to a real proctord, beside the socket floor: a raw
/// AF_UNIX stream ping-pong of the same sizes (the average `Decide` call and reply) with a
/// second process that only echoes, blocking I/O on both sides, each read after a
/// `poll(POLLIN)` as the SDK's `VarlinkClient` waits for replies. The mixed workload's calls
/// (about half denied; proctord logs every denial) and, separately, only its calls that
/// are allowed (nothing logged at the default level) show what logging a denial costs.
/// A second floor, `socket.credentialFloor`, echoes through the system calls proctord makes
/// for every call to check who sent it (`EchoPeer.Kind.checksSender`), so the two floors
/// split a call's cost into the security model's system calls and proctord's own work.
/// All four are measured in alternating blocks, so drift on a shared machine hits them alike.
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
        let floor = try EchoPeer(.plain, options: options, requestSize: requestSize, replySize: replySize)
        defer { floor.stop() }
        let credentialFloor = try EchoPeer(.checksSender, options: options, requestSize: requestSize, replySize: replySize)
        defer { credentialFloor.stop() }

        let rounds = options.quick ? 4 : 40
        var floorSamples: [Double] = [], credentialFloorSamples: [Double] = []
        var decideSamples: [Double] = [], allowedSamples: [Double] = []
        for round in 0..<rounds {
            try measure(floor, into: &floorSamples)
            try measure(credentialFloor, into: &credentialFloorSamples)
            try measure(connection, calls, from: round * block, into: &decideSamples)
            try measure(connection, allowedCalls, from: round * block, into: &allowedSamples)
        }
        report(Figure(name: "socket.floor.\(requestSize)B/\(replySize)B", unit: "µs", samples: floorSamples))
        report(Figure(name: "socket.credentialFloor.\(requestSize)B/\(replySize)B", unit: "µs",
                      samples: credentialFloorSamples))
        report(Figure(name: "varlink.decide", unit: "µs", samples: decideSamples))
        report(Figure(name: "varlink.decide.allowedOnly", unit: "µs", samples: allowedSamples))
    }

    /// One block of round trips with an echo peer.
    private static func measure(_ peer: EchoPeer, into samples: inout [Double]) throws {
        for _ in 0..<block {
            let began = MonotonicClock.nanoseconds()
            try peer.roundTrip()
            samples.append(Double(MonotonicClock.nanoseconds() - began) / 1_000)
        }
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

/// The other end of a socket floor: a child process (this executable, `--echo-peer KIND`)
/// that reads `requestSize` bytes and answers `replySize` bytes until the socket closes.
struct EchoPeer {
    static let argument = "--echo-peer"

    enum Kind: String {
        /// Blocking `poll`, `read`, `send`: the least a server can do.
        case plain
        /// The system calls proctord makes for each call on a registered session: `epoll_wait`,
        /// `recvmsg` with the sender's SCM_CREDENTIALS (SO_PASSCRED), an `epoll_wait` that does
        /// not wait on an epoll instance holding the sender's pidfd (is the session's process
        /// still the one that registered? `ProcessExitWatch`), `send`.
        case checksSender = "checks-sender"
    }

    let fd: CInt
    let process: Subprocess
    let request: [UInt8]
    let replySize: Int
    /// Where replies are read to; allocated once so a round trip allocates nothing.
    let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)

    init(_ kind: Kind, options: BenchOptions, requestSize: Int, replySize: Int) throws(BenchError) {
        var pair: [CInt] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw BenchError("socketpair failed: \(String(cString: strerror(errno)))")
        }
        defer { close(pair[1]) }
        fd = pair[0]
        request = [UInt8](repeating: 0x61, count: requestSize)
        self.replySize = replySize
        process = try Subprocess.spawn(try BenchDaemonWorkload.executablePath(),
                                       [Self.argument, kind.rawValue, String(requestSize), String(replySize)],
                                       environment: [], redirect: [(ours: pair[1], theirs: 0)], cpu: options.peerCPU)
        // A request written before the peer has set SO_PASSCRED carries no credentials (pid 0),
        // which the checking peer refuses by exiting: the first block then failed with "echo
        // peer closed the socket" whenever the peer started slower than the floor's first block.
        do throws(BenchError) { try Self.readExactly(fd, 1, into: scratch) } catch {
            throw BenchError("the \(kind.rawValue) echo peer did not start (its error, if any, is above)")
        }
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
    static func serve(_ kind: Kind, requestSize: Int, replySize: Int) -> Int32 {
        let answer = [UInt8](repeating: 0x62, count: replySize)
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        defer { scratch.deallocate() }
        do {
            switch kind {
            case .plain:
                try announceReady()
                while true {
                    try readExactly(0, requestSize, into: scratch)
                    try MessageConnection.writeAll(0, answer)
                }
            case .checksSender:
                let sender: SenderCheckingReader
                do throws(BenchError) { sender = try SenderCheckingReader(socket: 0, sender: getppid()) } catch {
                    BenchCommandLine.printError("\(error)")
                    return 1
                }
                try announceReady()
                while true {
                    try sender.readExactly(requestSize, into: scratch)
                    try MessageConnection.writeAll(0, answer)
                }
            }
        } catch {
            return 0
        }
    }

    /// One byte to the bench once the peer's socket is set up: only then does it send requests.
    private static func announceReady() throws(BenchError) {
        try MessageConnection.writeAll(0, [0x21])
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

/// Reads as proctord reads a registered session's calls: a non-blocking socket in an epoll
/// set, each read with the sender's credentials, then a check that the session's process is
/// still alive through its pidfd. Only the system calls matter here; the credentials are
/// checked as far as proctord's first comparison (the pid).
final class SenderCheckingReader {
    private let socket: CInt
    private let epoll: CInt
    private let pidfd: CInt
    /// An epoll instance holding `pidfd`, readable once the sender has exited.
    private let exitWatch: CInt
    private let pid: pid_t
    /// Room for one SCM_CREDENTIALS message (`CMSG_SPACE(sizeof(struct ucred))`).
    private let control = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 8)

    init(socket: CInt, sender: pid_t) throws(BenchError) {
        self.socket = socket
        pid = sender
        var on: CInt = 1
        let flags = fcntl(socket, F_GETFL)
        guard setsockopt(socket, SOL_SOCKET, CLINUX_SO_PASSCRED, &on, socklen_t(MemoryLayout<CInt>.size)) == 0,
              flags >= 0, fcntl(socket, F_SETFL, flags | O_NONBLOCK) == 0 else {
            throw BenchError("echo peer: cannot set up its socket: \(String(cString: strerror(errno)))")
        }
        epoll = epoll_create1(CInt(EPOLL_CLOEXEC))
        var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(fd: socket))
        guard epoll >= 0, epoll_ctl(epoll, EPOLL_CTL_ADD, socket, &event) == 0 else {
            throw BenchError("echo peer: epoll failed: \(String(cString: strerror(errno)))")
        }
        pidfd = clinux_pidfd_open(sender)
        guard pidfd >= 0 else { throw BenchError("echo peer: pidfd_open failed: \(String(cString: strerror(errno)))") }
        exitWatch = epoll_create1(CInt(EPOLL_CLOEXEC))
        var exit = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(fd: pidfd))
        guard exitWatch >= 0, epoll_ctl(exitWatch, EPOLL_CTL_ADD, pidfd, &exit) == 0 else {
            throw BenchError("echo peer: epoll of the pidfd failed: \(String(cString: strerror(errno)))")
        }
    }

    deinit {
        close(epoll)
        close(exitWatch)
        close(pidfd)
        control.deallocate()
    }

    func readExactly(_ count: Int, into scratch: UnsafeMutableRawBufferPointer) throws(BenchError) {
        var remaining = count
        while remaining > 0 {
            var event = epoll_event()
            let ready = epoll_wait(epoll, &event, 1, 10)
            if ready < 0 && errno == EINTR { continue }
            guard ready >= 0 else { throw BenchError("echo peer: epoll_wait failed") }
            guard ready == 1 else { continue }
            let got = receive(into: UnsafeMutableRawBufferPointer(rebasing: scratch[..<min(remaining, scratch.count)]))
            if got < 0 && (errno == EAGAIN || errno == EINTR) { continue }
            guard got > 0 else { throw BenchError("echo peer: the socket closed") }
            guard senderIsAlive() else { throw BenchError("echo peer: the sender is gone") }
            remaining -= got
        }
    }

    /// recvmsg(2) with the sender's credentials; the pid they name must be the sender's.
    private func receive(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var vector = iovec(iov_base: buffer.baseAddress, iov_len: buffer.count)
        return withUnsafeMutablePointer(to: &vector) { vector in
            var message = msghdr(msg_name: nil, msg_namelen: 0, msg_iov: vector, msg_iovlen: 1,
                                 msg_control: control.baseAddress, msg_controllen: control.count, msg_flags: 0)
            let got = recvmsg(socket, &message, CInt(MSG_CMSG_CLOEXEC))
            guard got > 0 else { return got }
            // The first control message: a cmsghdr (16 bytes), then struct ucred { pid, uid, gid }.
            let header = control.load(as: cmsghdr.self)
            guard message.msg_controllen >= MemoryLayout<cmsghdr>.size + 12, header.cmsg_level == SOL_SOCKET,
                  header.cmsg_type == CLINUX_SCM_CREDENTIALS,
                  control.load(fromByteOffset: MemoryLayout<cmsghdr>.size, as: pid_t.self) == pid else {
                errno = EPROTO
                return -1
            }
            return got
        }
    }

    /// As proctord's `ProcessExitWatch` asks: an `epoll_wait` that does not wait, on an
    /// epoll instance holding the sender's pidfd.
    private func senderIsAlive() -> Bool {
        var event = epoll_event()
        return epoll_wait(exitWatch, &event, 1, 0) == 0
    }
}
