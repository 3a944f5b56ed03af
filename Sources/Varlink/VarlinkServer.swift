public import LinuxIO

/// Serves a `VarlinkService` on a listening Unix socket from an `EventLoop`: the few lines
/// that join LinuxIO's bounded connections to the socket-free `VarlinkConnection`.
///
/// Framing split between the two: the stream connection keeps the incomplete tail of the
/// input (bounded, and closed when it stays incomplete too long); the protocol sees only
/// complete NUL-terminated messages. Must be used on the loop's thread.
public final class VarlinkServer<Context> {
    public let service: VarlinkService<Context>
    public let maxMessageBytes: Int
    private let listener: UnixListener
    /// The open connections; a stream connection lives as long as its owner holds it.
    private var connections: [ObjectIdentifier: StreamConnection] = [:]

    /// Makes the per-connection context from the peer's kernel credentials; nil refuses
    /// the connection (it is closed at once).
    public var makeContext: (PeerCredentials) -> Context? = { _ in nil }
    /// Called once per accepted connection when it closes.
    public var onConnectionClosed: (Context, StreamConnection.CloseReason) -> Void = { _, _ in }
    /// Called when a connection is refused because `maxConnections` are open.
    public var onConnectionRefused: (PeerCredentials?) -> Void {
        get { listener.onConnectionRefused }
        set { listener.onConnectionRefused = newValue }
    }

    /// The number of open connections.
    public var connectionCount: Int { listener.connectionCount }

    /// Serves on `descriptor` (a listening socket, bound here or handed over by systemd).
    public init(listening descriptor: FileDescriptor, loop: EventLoop, service: VarlinkService<Context>,
                maxConnections: Int, maxMessageBytes: Int = 1 << 20,
                incompleteMessageTimeout: Duration = .seconds(10)) throws(Errno) {
        self.service = service
        self.maxMessageBytes = maxMessageBytes
        let limits = StreamConnection.Limits(maxInputBuffer: maxMessageBytes + 1,
                                             maxOutputBuffer: max(8 << 20, 4 * maxMessageBytes),
                                             incompleteMessageTimeout: incompleteMessageTimeout)
        listener = try UnixListener(descriptor: descriptor, loop: loop, maxConnections: maxConnections,
                                    connectionLimits: limits)
        listener.onConnection = { [unowned self] stream, peer in accept(stream, peer: peer) }
    }

    /// Stops accepting; open connections stay until their peers leave.
    public func close() { listener.close() }

    private func accept(_ stream: StreamConnection, peer: PeerCredentials) {
        guard let context = makeContext(peer) else { return stream.close() }
        let key = ObjectIdentifier(stream)
        connections[key] = stream
        let connection = VarlinkConnection(service: service, context: context, maxMessageBytes: maxMessageBytes)
        connection.onLaterOutput = { [unowned stream] output in Self.write(output, to: stream) }
        let limit = maxMessageBytes
        stream.onRead = { [unowned connection, unowned stream] input in
            // Hand over complete messages only; an over-long tail goes to the protocol too,
            // which answers it with its framing error and asks to close.
            let complete = Self.lengthOfCompleteMessages(in: input)
            let handed = complete == 0 && input.count > limit ? input.count : complete
            guard handed > 0 else { return 0 }
            Self.write(connection.receive(UnsafeRawBufferPointer(rebasing: input[..<handed])), to: stream)
            return handed
        }
        stream.onClose = { [unowned self] reason in
            connections[key] = nil
            connection.closed()
            onConnectionClosed(context, reason)
        }
    }

    /// Bytes up to and including the last NUL.
    private static func lengthOfCompleteMessages(in input: UnsafeRawBufferPointer) -> Int {
        guard let last = input.lastIndex(of: 0) else { return 0 }
        return last + 1
    }

    private static func write(_ output: VarlinkConnectionOutput, to stream: StreamConnection) {
        if !output.bytes.isEmpty { stream.send(output.bytes) }
        if output.close != nil { stream.closeAfterFlushing() }
    }
}
