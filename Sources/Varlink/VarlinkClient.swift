public import JSONCore
public import LinuxIO

/// Why a client call failed other than by an error reply (which throws `VarlinkError`).
public enum VarlinkClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No socket file at the path, or nobody accepting on it (ENOENT, ECONNREFUSED).
    case notListening(path: String)
    /// The path does not fit in a `sockaddr_un`.
    case pathTooLong(path: String)
    /// A system call failed; `errno` says why.
    case systemCallFailed(call: String, errno: Errno)
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
        case .systemCallFailed(let call, let errno): "\(call) failed: \(errno)"
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
    private let socket: FileDescriptor
    private var decoder: VarlinkFrameDecoder
    private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
    /// How long one wait for reply bytes may take; nil: no limit.
    private let timeout: Duration?

    /// Connects to the socket at `path`. `timeout` bounds each wait for reply bytes.
    public init(path: String, timeout: Duration? = nil, maxMessageBytes: Int = 1 << 20) throws(VarlinkClientError) {
        self.path = path
        self.decoder = VarlinkFrameDecoder(maxMessageBytes: maxMessageBytes)
        guard !path.isEmpty else { throw .pathTooLong(path: path) }
        do {
            socket = try UnixSocket.connect(path: path)
        } catch {
            switch error {
            case .notListening: throw .notListening(path: path)
            case .pathTooLong: throw .pathTooLong(path: path)
            case .system(_, _, let errno): throw .systemCallFailed(call: "connect", errno: errno)
            case .alreadyListening, .notASocket: throw .systemCallFailed(call: "connect", errno: .invalidArgument)
            }
        }
        self.timeout = timeout
    }

    deinit { try? socket.close() }

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

    /// Writes a whole message, retrying short writes (LinuxIO retries EINTR).
    func send(_ call: VarlinkCall) throws(VarlinkClientError) {
        let bytes = call.encoded()
        var written = 0
        while written < bytes.count {
            do {
                written += try bytes.withUnsafeBytes { raw in
                    Result { () throws(Errno) in try socket.send(UnsafeRawBufferPointer(rebasing: raw[written...])) }
                }.get()
            } catch .brokenPipe, .connectionReset {
                throw .connectionClosed
            } catch {
                throw .systemCallFailed(call: "send", errno: error)
            }
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
            // poll, then read: a thread blocked in read would also be woken when the
            // service reads the call (write space), once more per call than needed.
            let readable: Bool
            do { readable = try socket.waitUntilReadable(timeout: timeout) } catch {
                throw .systemCallFailed(call: "poll", errno: error)
            }
            guard readable else { throw .timedOut }
            let count: Int
            do {
                count = try readBuffer.withUnsafeMutableBytes { raw in
                    Result { () throws(Errno) in try socket.read(into: raw) }
                }.get()
            } catch .connectionReset {
                throw .connectionClosed
            } catch {
                throw .systemCallFailed(call: "recv", errno: error)
            }
            if count == 0 { throw .connectionClosed }
            decoder.append(readBuffer[0..<count])
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
