public import LinuxIO

/// Serves a `VarlinkService` on a listening Unix socket from an `EventLoop`: the few lines
/// that join LinuxIO's bounded connections to the socket-free `VarlinkConnection`.
///
/// Framing split between the two: the stream connection keeps the incomplete tail of the
/// input (bounded, and closed when it stays incomplete too long); the protocol sees only
/// complete NUL-terminated messages. Each read's new bytes are scanned once for the end of
/// a message, so a message trickled in byte by byte costs linear time, not quadratic.
/// Must be used on the loop's thread.
public final class VarlinkServer<Context> {
    /// One accepted connection, as `makeContext` sees it.
    public final class Connection {
        /// Who connected (SO_PEERCRED at accept). Calls carry who *sent* them in
        /// `VarlinkCall.sender` when the server receives sender credentials.
        public let peer: PeerCredentials
        /// The stream while the server holds it. The server detaches it (`detach()`) when the
        /// stream closes, and in its deinit, before it lets go of the stream, so it never
        /// dangles. Not `weak`: a weak reference gives the stream a side table, which makes
        /// every retain and release of it — a few on each call — take the slow path.
        private unowned(unsafe) var stream: StreamConnection?

        init(peer: PeerCredentials, stream: StreamConnection) {
            self.peer = peer
            self.stream = stream
        }

        func detach() { stream = nil }

        /// Marks the connection as established (its peer registered): it is no longer closed
        /// by the server's `establishTimeout`.
        public func markEstablished() { stream?.markEstablished() }

        /// Whether `markEstablished()` was called.
        public var isEstablished: Bool { stream?.isEstablished ?? false }

        /// Turns the pidfd in each call's `sender` off or back on, from the next read on (see
        /// `StreamConnection.receiveSenderProcesses(_:)`); the sender's pid and ids stay.
        public func receiveSenderProcesses(_ on: Bool) { stream?.receiveSenderProcesses(on) }

        /// A pidfd for the process that connected (SO_PEERPIDFD, kernel 6.5+), made on
        /// request; nil once the connection closed or where the kernel has none.
        public func peerProcess() -> ProcessHandle? {
            guard let stream, stream.isOpen else { return nil }
            return (try? PeerCredentials.processHandle(of: stream.descriptor)) ?? nil
        }
    }

    /// The bounds of a server beyond each message's size.
    public struct Limits {
        /// Most connections open at once.
        public var maxConnections: Int
        /// The per-uid limit and the reserve for privileged peers.
        public var admission: UnixListener.Admission
        /// Largest message accepted, NUL excluded.
        public var maxMessageBytes: Int
        /// How long a message may stay incomplete.
        public var incompleteMessageTimeout: Duration
        /// How long a connection may stay unestablished (`Connection.markEstablished()`);
        /// nil: forever.
        public var establishTimeout: Duration?

        public init(maxConnections: Int, admission: UnixListener.Admission = .init(), maxMessageBytes: Int = 1 << 20,
                    incompleteMessageTimeout: Duration = .seconds(10), establishTimeout: Duration? = nil) {
            self.maxConnections = maxConnections
            self.admission = admission
            self.maxMessageBytes = maxMessageBytes
            self.incompleteMessageTimeout = incompleteMessageTimeout
            self.establishTimeout = establishTimeout
        }
    }

    public let service: VarlinkService<Context>
    public let maxMessageBytes: Int
    private let listener: UnixListener
    /// The open connections; a stream connection lives as long as its owner holds it.
    private var connections: [ObjectIdentifier: (stream: StreamConnection, handle: Connection)] = [:]
    /// Bytes searched for a message's end, in all (the trickled-input regression test reads it).
    var scannedByteCount: Int { scanned.count }
    /// Shared with the connections' read closures, which then need no reference to the server.
    private let scanned = ScannedBytes()

    /// Makes the per-connection context for a new connection; nil refuses the connection
    /// (it is closed at once). Keep the `Connection` to mark it established later.
    public var makeContext: (Connection) -> Context? = { _ in nil }
    /// Called once per accepted connection when it closes.
    public var onConnectionClosed: (Context, StreamConnection.CloseReason) -> Void = { _, _ in }
    /// Called when a connection is refused by the listener's limits.
    public var onConnectionRefused: (PeerCredentials?, UnixListener.Refusal) -> Void {
        get { listener.onConnectionRefused }
        set { listener.onConnectionRefused = newValue }
    }

    /// The number of open connections.
    public var connectionCount: Int { listener.connectionCount }

    /// Serves on `descriptor` (a listening socket, bound here or handed over by systemd).
    /// - Parameters:
    ///   - outputBudget: bounds the unread output of all connections (share one between
    ///     servers to bound the process).
    ///   - receivesSenderCredentials: stamp each call with its sender (`VarlinkCall.sender`).
    public init(listening descriptor: FileDescriptor, loop: EventLoop, service: VarlinkService<Context>,
                limits: Limits, outputBudget: OutputBudget? = nil, receivesSenderCredentials: Bool = false) throws(Errno) {
        self.service = service
        self.maxMessageBytes = limits.maxMessageBytes
        let connectionLimits = StreamConnection.Limits(maxInputBuffer: limits.maxMessageBytes + 1,
                                                       maxOutputBuffer: max(8 << 20, 4 * limits.maxMessageBytes),
                                                       incompleteMessageTimeout: limits.incompleteMessageTimeout,
                                                       establishTimeout: limits.establishTimeout)
        listener = try UnixListener(descriptor: descriptor, loop: loop, maxConnections: limits.maxConnections,
                                    admission: limits.admission, connectionLimits: connectionLimits,
                                    outputBudget: outputBudget, receivesSenderCredentials: receivesSenderCredentials)
        listener.onConnection = { [unowned self] stream, peer in accept(stream, peer: peer) }
    }

    /// Serves with only a connection limit and the given message bounds.
    public convenience init(listening descriptor: FileDescriptor, loop: EventLoop, service: VarlinkService<Context>,
                            maxConnections: Int, maxMessageBytes: Int = 1 << 20,
                            incompleteMessageTimeout: Duration = .seconds(10)) throws(Errno) {
        try self.init(listening: descriptor, loop: loop, service: service,
                      limits: Limits(maxConnections: maxConnections, maxMessageBytes: maxMessageBytes,
                                     incompleteMessageTimeout: incompleteMessageTimeout))
    }

    deinit {
        // The streams go with the server (closed quietly): their handles must not outlive them.
        for (_, connection) in connections { connection.handle.detach() }
    }

    /// Stops accepting; open connections stay until their peers leave.
    public func close() { listener.close() }

    private func accept(_ stream: StreamConnection, peer: PeerCredentials) {
        let handle = Connection(peer: peer, stream: stream)
        guard let context = makeContext(handle) else {
            handle.detach()
            return stream.close()
        }
        let key = ObjectIdentifier(stream)
        connections[key] = (stream, handle)
        let connection = VarlinkConnection(service: service, context: context, maxMessageBytes: maxMessageBytes)
        connection.onLaterOutput = { [unowned stream] output in Self.write(output, to: stream) }
        let limit = maxMessageBytes
        let scanned = scanned
        // The connection is held strongly (the stream owns this closure; the connection holds
        // the stream only unowned, so there is no cycle), and the stream unretained: only the
        // stream calls this closure, from its own read, during which the stream keeps itself
        // alive. An `unowned` reference would cost a retain and release per read.
        let unretainedStream = Unmanaged.passUnretained(stream)
        stream.onRead = { input in
            // Hand over complete messages only; an over-long tail goes to the protocol too,
            // which answers it with its framing error and asks to close.
            let complete = Self.lengthOfCompleteMessages(in: input, counting: scanned)
            let handed = complete == 0 && input.bytes.count > limit ? input.bytes.count : complete
            guard handed > 0 else { return 0 }
            // Bytes kept from earlier reads first, then this read's: each with its sender.
            // The replies are encoded straight into the stream's pending output.
            let earlier = min(input.newBytesStart, handed)
            unretainedStream._withUnsafeGuaranteedRef { stream in
                var closes = false
                stream.send { replies in
                    if earlier > 0 {
                        closes = connection.receive(UnsafeRawBufferPointer(rebasing: input.bytes[..<earlier]),
                                                    from: input.earlierSender, appendingRepliesTo: &replies)
                    }
                    if handed > earlier, !closes {
                        closes = connection.receive(UnsafeRawBufferPointer(rebasing: input.bytes[earlier..<handed]),
                                                    from: input.sender, appendingRepliesTo: &replies)
                    }
                }
                if closes { stream.closeAfterFlushing() }
            }
            return handed
        }
        stream.onClose = { [unowned self] reason in
            connections[key]?.handle.detach()
            connections[key] = nil
            connection.closed()
            onConnectionClosed(context, reason)
        }
    }

    /// Bytes up to and including the last NUL. Bytes before `newBytesStart` were scanned by
    /// an earlier read and held no NUL (everything up to the last one was handed over).
    private static func lengthOfCompleteMessages(in input: StreamConnection.ReceivedInput,
                                                 counting scanned: ScannedBytes) -> Int {
        scanned.count += input.bytes.count - input.newBytesStart
        // Most reads end a call: their last byte is the NUL, which then needs no search.
        let count = input.bytes.count
        if count > input.newBytesStart, input.bytes[count - 1] == 0 { return count }
        guard let last = input.newBytes.lastIndex(of: 0) else { return 0 }
        return input.newBytesStart + last + 1
    }

    private static func write(_ output: VarlinkConnectionOutput, to stream: StreamConnection) {
        if !output.bytes.isEmpty { stream.send(output.bytes) }
        if output.close != nil { stream.closeAfterFlushing() }
    }
}

/// A count of the bytes a server searched for a message's end.
private final class ScannedBytes {
    var count = 0
}
