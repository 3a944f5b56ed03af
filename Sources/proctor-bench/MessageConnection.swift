import Glibc
import JSONCore
import LinuxIO

/// A blocking AF_UNIX stream connection that exchanges NUL-terminated Varlink messages as
/// raw bytes, so the bench's own cost per round trip is one `write`, one `poll` and one
/// `read` — the same as the socket floor it is compared with. It waits for a reply as
/// `VarlinkClient` (the SDK's client) does: `poll(POLLIN)`, then `read`; a pipelining
/// client (`skipMessages(_:pollFirst: false)`) reads at once, its replies being mostly there.
final class MessageConnection {
    let fd: CInt
    private var buffer: [UInt8] = []
    private var consumed = 0
    private var chunk = [UInt8](repeating: 0, count: 64 * 1024)

    init(path: String) throws(BenchError) {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket failed: \(String(cString: strerror(errno)))") }
        guard let address = UnixSocketAddress(path: path) else {
            close(fd)
            throw BenchError("not a socket path: \(path)")
        }
        guard address.withSocketAddress({ connect(fd, $0, $1) }) == 0 else {
            let code = errno
            close(fd)
            throw BenchError("cannot connect to \(path): \(String(cString: strerror(code)))")
        }
    }

    deinit { close(fd) }

    /// The bytes of a Varlink call, NUL included.
    static func encode(_ method: String, _ parameters: [String: JSONValue], more: Bool = false) -> [UInt8] {
        var call: [String: JSONValue] = ["method": .string(method), "parameters": .object(parameters)]
        if more { call["more"] = true }
        return JSONValue.object(call).serialized() + [0]
    }

    func send(_ bytes: [UInt8]) throws(BenchError) {
        try Self.writeAll(fd, bytes)
    }

    /// The next message, without its NUL.
    func receive() throws(BenchError) -> ArraySlice<UInt8> {
        while true {
            if let end = buffer[consumed...].firstIndex(of: 0) {
                let message = buffer[consumed..<end]
                consumed = end + 1
                return message
            }
            if consumed > 0 {
                buffer.removeFirst(consumed)
                consumed = 0
            }
            let count = try fill()
            buffer += chunk[0..<count]
        }
    }

    /// Reads until `count` more NUL bytes have arrived (replies to pipelined calls) and
    /// drops them, without parsing. Only between calls, when nothing is buffered.
    func skipMessages(_ count: Int, pollFirst: Bool = true) throws(BenchError) {
        precondition(consumed == buffer.count, "skipMessages with a reply still buffered")
        var remaining = count
        while remaining > 0 {
            let read = try fill(pollFirst: pollFirst)
            remaining -= Self.countNULs(in: chunk, upTo: read)
        }
    }

    /// Sends a call and returns the reply's parameters; a Varlink error reply is a `BenchError`.
    func call(_ method: String, _ parameters: [String: JSONValue] = [:], more: Bool = false) throws(BenchError) -> JSONValue {
        try send(Self.encode(method, parameters, more: more))
        return try Self.parameters(of: receive(), method: method)
    }

    static func parameters(of message: ArraySlice<UInt8>, method: String) throws(BenchError) -> JSONValue {
        let reply: JSONValue
        do { reply = try JSONParser.parse(message) } catch { throw BenchError("\(method): unreadable reply: \(error)") }
        if let error = reply["error"]?.stringValue {
            throw BenchError("\(method) failed: \(error) \(reply["parameters"]?.serializedString() ?? "")")
        }
        return reply["parameters"] ?? [:]
    }

    /// The NUL bytes among the first `count`, found with `memchr` as the SDK's
    /// `VarlinkFrameDecoder` finds them (an element-wise loop costs the client ≈ 1 000
    /// instructions a reply, which the socket floor's client does not pay).
    private static func countNULs(in bytes: [UInt8], upTo count: Int) -> Int {
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return 0 }
            var found = 0
            var at = 0
            while at < count, let hit = memchr(base + at, 0, count - at) {
                found += 1
                at = base.distance(to: UnsafeRawPointer(hit)) + 1
            }
            return found
        }
    }

    private func fill(pollFirst: Bool = true) throws(BenchError) -> Int {
        if pollFirst { try Self.waitUntilReadable(fd) }
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count > 0 { return count }
            if count < 0 && errno == EINTR { continue }
            throw BenchError(count == 0 ? "proctord closed the connection" : "read failed: \(String(cString: strerror(errno)))")
        }
    }

    /// Blocks in `poll(POLLIN)` until `fd` has something to read. A thread blocked in `read`
    /// instead is also woken, for nothing, when the peer reads what it sent (write space).
    static func waitUntilReadable(_ fd: CInt) throws(BenchError) {
        do { _ = try FileDescriptor(rawValue: fd).waitUntilReadable() } catch {
            throw BenchError("poll failed: \(error)")
        }
    }

    static func writeAll(_ fd: CInt, _ bytes: [UInt8]) throws(BenchError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw BenchError("write failed: \(String(cString: strerror(errno)))") }
            offset += written
        }
    }
}
