import Foundation
import Glibc
import JSONCore
import LinuxIO
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
            while true {
                // accept4 is GNU-only and hidden from Glibc; the test sets FD_CLOEXEC itself.
                let fd = accept(listener, nil, nil)
                if fd < 0 { break }
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                // A thread (and service) per connection: clients may hold several connections.
                Thread.detachNewThread {
                    if let service = try? makeService() { Self.serve(fd, service: service) }
                    close(fd)
                }
            }
            done.signal()
        }
    }

    static func bind(_ fd: Int32, to path: String) throws {
        let address = try #require(UnixSocketAddress(path: path))
        let result = address.withSocketAddress { Glibc.bind(fd, $0, $1) }
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
        #expect(throws: VarlinkClientError.systemCallFailed(call: "connect", errno: Errno(rawValue: ENOTDIR))) {
            try VarlinkClient(path: "/etc/hostname/socket")
        }
    }
}

/// The Python `varlink` package (Tests/python/requirements.txt, in `.venv` at the repository
/// root) is a client nobody on this project wrote: it fetches our interface description,
/// parses it with its own IDL parser, and calls through it.
@Suite struct PythonClientInteropTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let python = root.appendingPathComponent(".venv/bin/python").path

    static let script = """
        import json, sys, varlink
        out = {}
        with varlink.Client(address="unix:" + sys.argv[1]) as client:
            with client.open("org.example.ping", namespaced=False) as ping:
                out["ping"] = ping.Ping("hello", mode="loud")
                out["count"] = [reply["n"] for reply in ping.Count(2, _more=True)]
                ping.Forget("nothing comes back", _oneway=True)
                try:
                    ping.Fail()
                except varlink.VarlinkError as error:
                    out["error"] = [error.error(), error.parameters()]
            with client.open("org.varlink.service", namespaced=False) as service:
                out["interfaces"] = service.GetInfo()["interfaces"]
        print(json.dumps(out))
        """

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: python), "needs .venv with Tests/python/requirements.txt"))
    func pythonVarlinkTalksToOurService() throws {
        let server = try BlockingTestServer()
        defer { server.stop() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.python)
        process.arguments = ["-c", Self.script, server.path]
        let stdout = Pipe()
        process.standardOutput = stdout
        try process.run()
        let data = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let result = try JSONParser.parse(Array(data))
        #expect(result == [
            "ping": ["text": "hello", "peer": "socket"],
            "count": [0, 1, 2],
            "error": ["org.example.ping.Refused", ["why": "because"]],
            "interfaces": ["org.varlink.service", "org.example.ping"],
        ])
    }
}
