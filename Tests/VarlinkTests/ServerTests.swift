import Dispatch
import Foundation
import Glibc
import JSONCore
import LinuxIO
import Synchronization
import Testing
@testable import Varlink

/// `VarlinkServer` on a real socket and its own event loop thread; `Ping` answers with the
/// pid of the call's sender (`VarlinkCall.sender`) in `peer`, or "unknown".
private final class SenderEchoServer: @unchecked Sendable {
    let path: String
    private let loop: EventLoop
    private var server: VarlinkServer<Peer>?
    private let finished = DispatchSemaphore(value: 0)
    private final class Recorded: Sendable {
        let senders = Mutex<[SenderCredentials?]>([])
        let connectors = Mutex<[ProcessHandle?]>([])
    }
    private let recorded = Recorded()
    /// The accepted connections; used on the loop's thread only.
    private var connections: [VarlinkServer<Peer>.Connection] = []

    init(receivesSenderCredentials: Bool = true) throws {
        path = "/tmp/varlink-server-test-\(getpid())-\(UUID().uuidString.prefix(8))"
        loop = try EventLoop()
        let service = VarlinkService<Peer>(vendor: "Example", product: "ping", version: "1.0", url: "https://example.org")
        let recorded = self.recorded
        try service.addInterface(pingInterface, methods: [
            "Ping": VarlinkMethod { call, _, reply in
                recorded.senders.withLock { $0.append(call.sender) }
                reply.reply(["text": call.parameters["text"]!, "peer": .string(call.sender.map { String($0.pid) } ?? "unknown")])
            },
        ])
        let socket = try UnixSocket.listen(path: path, mode: 0o600)
        server = try VarlinkServer(listening: socket, loop: loop, service: service,
                                   limits: .init(maxConnections: 16), receivesSenderCredentials: receivesSenderCredentials)
        server?.makeContext = { [unowned self, recorded] connection in
            recorded.connectors.withLock { $0.append(connection.peerProcess()) }
            connections.append(connection)
            return Peer(name: "socket")
        }
        let loop = self.loop, finished = self.finished
        Thread.detachNewThread {
            try? loop.run()
            finished.signal()
        }
    }

    /// The senders of the calls served so far (kept, so their pidfds stay open).
    var recordedSenders: [SenderCredentials?] { recorded.senders.withLock { $0 } }
    /// The processes that connected (SO_PEERPIDFD at accept).
    var connectors: [ProcessHandle?] { recorded.connectors.withLock { $0 } }

    /// Bytes the server scanned for message ends, read on the loop's thread.
    var scannedByteCount: Int {
        final class Count: Sendable { let value = Mutex(0) }
        let result = Count()
        let done = DispatchSemaphore(value: 0)
        loop.execute { [self] in
            let count = server!.scannedByteCount
            result.value.withLock { $0 = count }
            done.signal()
        }
        done.wait()
        return result.value.withLock { $0 }
    }

    /// Turns the per-call pidfds of every accepted connection off or on, on the loop's thread.
    func receiveSenderProcesses(_ on: Bool) {
        let done = DispatchSemaphore(value: 0)
        loop.execute { [self] in
            connections.forEach { $0.receiveSenderProcesses(on) }
            done.signal()
        }
        done.wait()
    }

    func stop() {
        let loop = self.loop
        loop.execute { [self] in
            server?.close()
            server = nil
            loop.stop()
        }
        finished.wait()
        unlink(path)
    }
}

/// A blocking client socket with a receive timeout, reading NUL-terminated replies.
private struct RawClient {
    let descriptor: FileDescriptor

    init(path: String) throws {
        descriptor = try UnixSocket.connect(path: path)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor.rawValue, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    func send(_ bytes: [UInt8]) throws { try descriptor.writeAll(bytes) }

    /// The `peer` field of the next reply.
    func replyPeer() throws -> String? {
        var received: [UInt8] = []
        var byte: [UInt8] = [0]
        while true {
            let count = try byte.withUnsafeMutableBytes { try descriptor.read(into: $0) }
            if count == 0 || byte[0] == 0 { break }
            received.append(byte[0])
        }
        let reply = try JSONParser.parse(received)
        return reply["parameters"]?["peer"]?.stringValue
    }

    func close() { try? descriptor.close() }
}

private func ping(_ text: String) -> [UInt8] {
    VarlinkCall(method: "org.example.ping.Ping", parameters: ["text": .string(text)]).encoded()
}

/// Forks a child that writes `bytes` to `socket` and exits (only async-signal-safe calls in
/// the child: the test process has threads). Returns the child's pid once it has exited.
private func writeFromForkedChild(_ bytes: [UInt8], to socket: FileDescriptor) throws -> pid_t {
    let child = bytes.withUnsafeBytes { raw -> pid_t in
        let child = fork()
        if child == 0 {
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(socket.rawValue, raw.baseAddress! + offset, raw.count - offset)
                if written <= 0 { _exit(1) }
                offset += written
            }
            _exit(0)
        }
        return child
    }
    try #require(child > 0)
    var status: CInt = 0
    try #require(waitpid(child, &status, 0) == child)
    try #require(status == 0)
    return child
}

@Suite(.serialized) struct VarlinkServerTests {
    /// Issue 11, exec after connect: a process connects, then another process (here its
    /// forked child) sends on the same connection. The call names the child, not the parent
    /// that connected.
    @Test func eachCallCarriesThePidOfTheProcessThatSentIt() throws {
        let server = try SenderEchoServer()
        defer { server.stop() }
        let client = try RawClient(path: server.path)
        defer { client.close() }
        let child = try writeFromForkedChild(ping("from the child"), to: client.descriptor)
        #expect(try client.replyPeer() == String(child))
        try client.send(ping("from the parent"))
        #expect(try client.replyPeer() == String(getpid()))

        let senders = server.recordedSenders
        try #require(senders.count == 2)
        #expect(senders[0]?.uid == getuid() && senders[0]?.gid == getgid())
        // Kernel 6.5+ stamps a pidfd too: the child is gone, the parent lives.
        let childProcess = try #require(senders[0]?.process)
        let parentProcess = try #require(senders[1]?.process)
        #expect(try !childProcess.isAlive)
        #expect(try parentProcess.isAlive)
        #expect(!childProcess.refersToSameProcess(as: parentProcess))
        // The connection's accept-time peer stays the parent that connected.
        #expect(server.connectors.map { $0?.pid } == [getpid()])
    }

    /// The owner can turn the pidfd of each call's sender off (the kernel makes one per read)
    /// and on again; the pid, ids and number of the read keep coming with every call.
    @Test func senderPidfdsCanBeTurnedOffAndOnAgain() throws {
        let server = try SenderEchoServer()
        defer { server.stop() }
        let client = try RawClient(path: server.path)
        defer { client.close() }
        for (text, pidfds) in [("with", true), ("without", false), ("again", true)] {
            server.receiveSenderProcesses(pidfds)
            try client.send(ping(text))
            #expect(try client.replyPeer() == String(getpid()))
        }
        let senders = server.recordedSenders.compactMap { $0 }
        try #require(senders.count == 3)
        #expect(senders.map { $0.process != nil } == [true, false, true])
        #expect(senders.allSatisfy { $0.pid == getpid() && $0.uid == getuid() && $0.gid == getgid() })
        #expect(senders.map(\.receipt) == [1, 2, 3])
    }

    /// A message whose bytes two processes wrote has no single sender: nil, so the daemon
    /// refuses identity-sensitive calls.
    @Test func aCallWrittenByTwoProcessesHasNoSender() throws {
        let server = try SenderEchoServer()
        defer { server.stop() }
        let client = try RawClient(path: server.path)
        defer { client.close() }
        let message = ping("half and half")
        try client.send(Array(message[..<10]))
        _ = try writeFromForkedChild(Array(message[10...]), to: client.descriptor)
        #expect(try client.replyPeer() == "unknown")
        // The next call, all the parent's, is attributed again.
        try client.send(ping("whole"))
        #expect(try client.replyPeer() == String(getpid()))
    }

    @Test func withoutSenderCredentialsCallsCarryNone() throws {
        let server = try SenderEchoServer(receivesSenderCredentials: false)
        defer { server.stop() }
        let client = try RawClient(path: server.path)
        defer { client.close() }
        try client.send(ping("hello"))
        #expect(try client.replyPeer() == "unknown")
    }

    /// Issue 11, trickled input: a large message fed a byte per write made the server rescan
    /// the whole buffer on every read. Each byte is scanned once now.
    @Test func trickledInputIsScannedOnce() throws {
        let server = try SenderEchoServer()
        defer { server.stop() }
        let client = try RawClient(path: server.path)
        defer { client.close() }
        let message = ping(String(repeating: "x", count: 256 * 1024))
        let head = message.count - 200
        try client.send(Array(message[..<head]))
        for byte in message[head...] {
            try client.send([byte])
            usleep(200)  // one read per byte, as a trickling client makes the server do
        }
        #expect(try client.replyPeer() == String(getpid()))
        #expect(server.scannedByteCount == message.count)
    }

    /// A client that writes many calls before reading any reply: the replies pile up past
    /// what the socket holds, each appended behind the part of the earlier ones not written
    /// yet, and all arrive, in order, once it reads.
    @Test func aSlowReaderGetsEveryReplyInOrder() throws {
        let server = try SenderEchoServer()
        defer { server.stop() }
        let client = try RawClient(path: server.path)
        defer { client.close() }
        let padding = String(repeating: "p", count: 200)
        let count = 3000  // about 700 KB of replies
        for index in 0..<count { try client.send(ping("\(index) \(padding)")) }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while received.count(where: { $0 == 0 }) < count {
            let read = try chunk.withUnsafeMutableBytes { try client.descriptor.read(into: $0) }
            try #require(read > 0)
            received += chunk[..<read]
        }
        let texts = try received.split(separator: 0).map { try JSONParser.parse(Array($0))["parameters"]?["text"]?.stringValue }
        #expect(texts == (0..<count).map { "\($0) \(padding)" })
    }
}
