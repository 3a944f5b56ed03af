/// Accepts connections on a listening Unix socket, on an `EventLoop`, up to a limit.
///
/// Each accepted connection becomes a `StreamConnection` (non-blocking, close-on-exec) handed
/// to `onConnection` with the peer's credentials, taken at once while the peer is surely
/// alive. Past `maxConnections` open connections a new one is accepted and closed at once
/// (so it does not sit in the backlog) and reported to `onConnectionRefused`. When accepting
/// fails for lack of resources (EMFILE, ENFILE, ENOBUFS, ENOMEM) the failure goes to
/// `onAcceptError` and accepting pauses for `acceptRetryDelay` instead of spinning.
///
/// All methods must be called on the loop's thread.
public final class UnixListener {
    /// The listening socket; the listener owns it and closes it in `close()`.
    public let descriptor: FileDescriptor
    /// Most connections open at once.
    public let maxConnections: Int
    /// The limits every accepted connection gets.
    public let connectionLimits: StreamConnection.Limits
    /// How long accepting pauses after a resource failure.
    public let acceptRetryDelay: Duration
    /// Connections accepted and still open.
    public private(set) var connectionCount = 0

    /// Receives each new connection and its peer; set `onRead`/`onClose` on it here.
    public var onConnection: (StreamConnection, PeerCredentials) -> Void = { connection, _ in connection.close() }
    /// Told about a connection refused because `maxConnections` were open (credentials when
    /// they could be read).
    public var onConnectionRefused: (PeerCredentials?) -> Void = { _ in }
    /// Told about a failed accept or a connection that could not be set up.
    public var onAcceptError: (Errno) -> Void = { _ in }

    private let loop: EventLoop
    private var registration: Registration?
    private var retryTimer: TimerHandle?
    private let acceptsPerWakeUp = 64

    /// Starts accepting on `descriptor`, a listening, non-blocking stream socket (from
    /// `UnixSocket.listen` or handed over by systemd socket activation).
    public init(descriptor: FileDescriptor, loop: EventLoop, maxConnections: Int,
                connectionLimits: StreamConnection.Limits = .init(),
                acceptRetryDelay: Duration = .milliseconds(100)) throws(Errno) {
        precondition(maxConnections > 0, "maxConnections must be positive")
        self.descriptor = descriptor
        self.loop = loop
        self.maxConnections = maxConnections
        self.connectionLimits = connectionLimits
        self.acceptRetryDelay = acceptRetryDelay
        // Socket activation may hand over a blocking socket; accepting must never block.
        try descriptor.setNonBlocking()
        registration = try loop.register(descriptor, events: .readable) { [unowned self] _ in acceptPending() }
    }

    deinit { close() }

    /// Stops accepting and closes the listening socket; open connections stay open.
    public func close() {
        if let registration {
            loop.unregister(registration)
            try? descriptor.close()
        }
        registration = nil
        if let retryTimer { loop.cancel(retryTimer) }
        retryTimer = nil
    }

    private func acceptPending() {
        for _ in 0..<acceptsPerWakeUp {
            guard registration != nil, retryTimer == nil else { return }
            let socket: FileDescriptor
            do {
                socket = try UnixSocket.accept(on: descriptor)
            } catch .wouldBlock {
                return
            } catch .connectionAborted {
                continue
            } catch {
                onAcceptError(error)
                pauseAccepting()
                return
            }
            admit(socket)
        }
    }

    private func admit(_ socket: FileDescriptor) {
        let credentials: PeerCredentials
        do {
            credentials = try PeerCredentials.of(socket)
        } catch {
            try? socket.close()
            onAcceptError(error)
            return
        }
        guard connectionCount < maxConnections else {
            try? socket.close()
            onConnectionRefused(credentials)
            return
        }
        let connection: StreamConnection
        do {
            connection = try StreamConnection(descriptor: socket, loop: loop, limits: connectionLimits)
        } catch {
            try? socket.close()
            onAcceptError(error)
            return
        }
        connectionCount += 1
        connection.closeObserver = { [weak self] in self?.connectionCount -= 1 }
        onConnection(connection, credentials)
    }

    private func pauseAccepting() {
        guard let registration else { return }
        do { try loop.modify(registration, events: []) } catch { return }
        retryTimer = loop.schedule(after: acceptRetryDelay) { [unowned self] in
            retryTimer = nil
            guard let registration = self.registration else { return }
            do throws(Errno) { try loop.modify(registration, events: .readable) } catch { onAcceptError(error) }
        }
    }
}
