public import JSONCore
import Glibc

/// Why a client call failed other than by an error reply (which throws `VarlinkError`).
public enum VarlinkClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No socket file at the path, or nobody accepting on it (ENOENT, ECONNREFUSED).
    case notListening(path: String)
    /// The path does not fit in a `sockaddr_un`.
    case pathTooLong(path: String)
    /// A system call failed; `errno` says why.
    case systemCallFailed(call: String, errno: Int32)
    /// The service closed the connection before the reply was complete.
    case connectionClosed
    /// No reply within the read timeout.
    case timedOut
    /// The service sent something that is not a Varlink reply.
    case invalidReply(VarlinkFrameError)

    public var description: String {
        switch self {
        case .notListening(let path): "nothing is listening at \(path)"
        case .pathTooLong(let path): "socket path too long: \(path)"
        case .systemCallFailed(let call, let errno): "\(call) failed: \(String(cString: strerror(errno)))"
        case .connectionClosed: "the service closed the connection"
        case .timedOut: "no reply before the timeout"
        case .invalidReply(let error): "invalid reply: \(error)"
        }
    }
}

/// A blocking Varlink client on a Unix stream socket, for command-line tools, the SDK and
/// tests. One call at a time; not for use from several threads at once.
public final class VarlinkClient {
    public let path: String
    private let fd: Int32
    private var decoder: VarlinkFrameDecoder
    private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)

    /// Connects to the socket at `path`. `timeout` bounds each wait for reply bytes.
    public init(path: String, timeout: Duration? = nil, maxMessageBytes: Int = 1 << 20) throws(VarlinkClientError) {
        self.path = path
        self.decoder = VarlinkFrameDecoder(maxMessageBytes: maxMessageBytes)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !pathBytes.isEmpty, pathBytes.count < capacity else { throw .pathTooLong(path: path) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: pathBytes) }

        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .systemCallFailed(call: "socket", errno: errno) }
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if connected != 0 {
            let code = errno
            close(fd)
            if code == ENOENT || code == ECONNREFUSED { throw .notListening(path: path) }
            throw .systemCallFailed(call: "connect", errno: code)
        }
        if let timeout {
            let (seconds, attoseconds) = timeout.components
            var value = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
            if setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size)) != 0 {
                let code = errno
                close(fd)
                throw .systemCallFailed(call: "setsockopt(SO_RCVTIMEO)", errno: code)
            }
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Calls `method` and returns the reply's parameters. Throws `VarlinkError` when the
    /// service answers with an error, `VarlinkClientError` when the exchange itself fails.
    public func call(_ method: String, _ parameters: [String: JSONValue] = [:]) throws -> [String: JSONValue] {
        try send(VarlinkCall(method: method, parameters: parameters))
        let reply = try readReply()
        if let error = reply.error { throw VarlinkError(name: error, parameters: reply.parameters) }
        return reply.parameters
    }

    /// Calls `method` with `more` and returns the replies as they arrive; the sequence ends
    /// after the reply without `continues`. Iterating throws like `call`.
    public func callMore(_ method: String, _ parameters: [String: JSONValue] = [:]) throws -> VarlinkReplyStream {
        try send(VarlinkCall(method: method, parameters: parameters, more: true))
        return VarlinkReplyStream(client: self)
    }

    /// Sends a `oneway` call: the service does not reply.
    public func oneway(_ method: String, _ parameters: [String: JSONValue] = [:]) throws {
        try send(VarlinkCall(method: method, parameters: parameters, oneway: true))
    }

    /// Writes a whole message, retrying short writes and EINTR.
    func send(_ call: VarlinkCall) throws(VarlinkClientError) {
        let bytes = call.encoded()
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress! + written, raw.count - written, Int32(MSG_NOSIGNAL))
            }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EPIPE || errno == ECONNRESET { throw .connectionClosed }
                throw .systemCallFailed(call: "send", errno: errno)
            }
            written += n
        }
    }

    /// Blocks until a complete reply has arrived.
    func readReply() throws(VarlinkClientError) -> VarlinkReply {
        while true {
            do {
                if let reply = try decoder.nextReply() { return reply }
            } catch {
                throw .invalidReply(error)
            }
            let n = readBuffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { throw .connectionClosed }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { throw .timedOut }
                if errno == ECONNRESET { throw .connectionClosed }
                throw .systemCallFailed(call: "recv", errno: errno)
            }
            decoder.append(readBuffer[0..<n])
        }
    }
}

/// The replies to a `more` call, in order: `while let reply = try stream.next() { … }`.
public struct VarlinkReplyStream {
    private let client: VarlinkClient
    private var finished = false

    init(client: VarlinkClient) { self.client = client }

    /// The next reply's parameters, `nil` after the final one. Throws `VarlinkError` for an
    /// error reply (which is final) and `VarlinkClientError` when the exchange fails.
    public mutating func next() throws -> [String: JSONValue]? {
        guard !finished else { return nil }
        let reply: VarlinkReply
        do {
            reply = try client.readReply()
        } catch {
            finished = true
            throw error
        }
        finished = !reply.continues
        if let error = reply.error {
            finished = true
            throw VarlinkError(name: error, parameters: reply.parameters)
        }
        return reply.parameters
    }
}
