import Foundation
import Glibc
import JSONCore
import Testing
@testable import Varlink

/// A one-thread Varlink server on a real Unix socket: blocking accept, one connection at a
/// time, each driven through `VarlinkConnection` exactly as the daemon's event loop will.
final class BlockingTestServer: @unchecked Sendable {
    let path: String
    private let listener: Int32
    private let done = DispatchSemaphore(value: 0)

    init() throws {
        path = "/tmp/varlink-client-test-\(getpid())-\(UUID().uuidString.prefix(8))"
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(listener >= 0)
        try Self.bind(listener, to: path)
        try #require(listen(listener, 8) == 0)
        let listener = listener
        Thread.detachNewThread { [done] in
            let subscribers = Subscribers()
            guard let service = try? makeService(subscribers: subscribers) else { return }
            while true {
                // accept4 is GNU-only and hidden from Glibc; the test sets FD_CLOEXEC itself.
                let fd = accept(listener, nil, nil)
                if fd < 0 { break }
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                Self.serve(fd, service: service)
                close(fd)
            }
            done.signal()
        }
    }

    static func bind(_ fd: Int32, to path: String) throws {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(result == 0)
    }

    private static func serve(_ fd: Int32, service: VarlinkService<Peer>) {
        let connection = VarlinkConnection(service: service, context: Peer(name: "socket"))
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            let output = connection.receive(buffer[0..<n])
            output.bytes.withUnsafeBytes { _ = send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if output.close != nil { break }
        }
        connection.closed()
    }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        done.wait()
        close(listener)
        unlink(path)
    }
}

@Suite(.serialized) struct ClientTests {
    @Test func callsAndErrorsOverARealSocket() throws {
        let server = try BlockingTestServer()
        defer { server.stop() }
        let client = try VarlinkClient(path: server.path)
        let info = try client.call("org.varlink.service.GetInfo")
        #expect(info["product"] == "ping")
        #expect(info["interfaces"] == ["org.varlink.service", "org.example.ping"])
        #expect(try client.call("org.example.ping.Ping", ["text": "hello"]) == ["text": "hello", "peer": "socket"])
        #expect(throws: VarlinkError.methodNotFound("org.example.ping.Nope")) { try client.call("org.example.ping.Nope") }
        #expect(throws: VarlinkError(name: "org.example.ping.Refused", parameters: ["why": "because"])) {
            try client.call("org.example.ping.Fail")
        }
        // The connection is still usable after error replies.
        #expect(try client.call("org.example.ping.Ping", ["text": "again"])["text"] == "again")
    }

    @Test func callMoreYieldsEveryReplyThenEnds() throws {
        let server = try BlockingTestServer()
        defer { server.stop() }
        let client = try VarlinkClient(path: server.path)
        var stream = try client.callMore("org.example.ping.Count", ["count": 3])
        var numbers: [Int] = []
        while let reply = try stream.next() { numbers.append(reply["n"]!.intValue!) }
        #expect(numbers == [0, 1, 2, 3])
        var failing = try client.callMore("org.example.ping.Count", ["count": "three"])
        #expect(throws: VarlinkError.invalidParameter("count")) { try failing.next() }
        #expect(try failing.next() == nil)
    }

    @Test func onewayGetsNoReply() throws {
        let server = try BlockingTestServer()
        defer { server.stop() }
        let client = try VarlinkClient(path: server.path)
        try client.oneway("org.example.ping.Ping", ["text": "ignored"])
        try client.oneway("org.example.ping.Nope")
        #expect(try client.call("org.example.ping.Ping", ["text": "answered"])["text"] == "answered")
    }

    @Test func readTimeout() throws {
        let server = try BlockingTestServer()
        defer { server.stop() }
        let client = try VarlinkClient(path: server.path, timeout: .milliseconds(100))
        var stream = try client.callMore("org.example.ping.Watch")
        #expect(throws: VarlinkClientError.timedOut) { try stream.next() }
    }

    @Test func nothingListening() throws {
        let missing = "/tmp/varlink-client-test-\(getpid())-missing"
        #expect(throws: VarlinkClientError.notListening(path: missing)) { try VarlinkClient(path: missing) }

        // A socket file nobody listens on (a crashed server's leftover) gives ECONNREFUSED.
        let stale = "/tmp/varlink-client-test-\(getpid())-stale"
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try BlockingTestServer.bind(fd, to: stale)
        defer { close(fd); unlink(stale) }
        #expect(throws: VarlinkClientError.notListening(path: stale)) { try VarlinkClient(path: stale) }
        #expect(VarlinkClientError.notListening(path: stale).description == "nothing is listening at \(stale)")

        let long = "/tmp/" + String(repeating: "x", count: 200)
        #expect(throws: VarlinkClientError.pathTooLong(path: long)) { try VarlinkClient(path: long) }
        #expect(throws: VarlinkClientError.systemCallFailed(call: "connect", errno: ENOTDIR)) {
            try VarlinkClient(path: "/etc/hostname/socket")
        }
    }
}
