public import Glibc

/// Accepts connections on a listening Unix socket, on an `EventLoop`, up to limits that keep
/// one user from starving the others.
///
/// Each accepted connection becomes a `StreamConnection` (non-blocking, close-on-exec) handed
/// to `onConnection` with the peer's credentials, taken at once while the peer is surely
/// alive. A connection over a limit is accepted and closed at once (so it does not sit in
/// the backlog) and reported to `onConnectionRefused` with the reason:
/// - `maxConnections` open in all;
/// - `admission.maxConnectionsPerUID` open for the peer's uid;
/// - the last `admission.reservedConnections` slots are kept for privileged peers
///   (`admission.isPrivileged`: root and an admin group, say), who are exempt from the
///   per-uid limit too, so an administrator always gets in while others flood the socket.
/// When accepting fails for lack of resources (EMFILE, ENFILE, ENOBUFS, ENOMEM) the failure
/// goes to `onAcceptError` and accepting pauses for `acceptRetryDelay` instead of spinning.
///
/// All methods must be called on the loop's thread.
public final class UnixListener {
    /// Who gets a connection while connections are scarce.
    public struct Admission {
        /// Most connections one uid may hold open (privileged peers excepted); nil: no limit.
        public var maxConnectionsPerUID: Int?
        /// Slots of `maxConnections` only privileged peers may take.
        public var reservedConnections: Int
        /// Whether a peer is privileged (called once per accepted connection).
        public var isPrivileged: (PeerCredentials) -> Bool

        /// - Parameters:
        ///   - maxConnectionsPerUID: nil for no per-uid limit.
        ///   - reservedConnections: slots kept for privileged peers.
        ///   - isPrivileged: by default, root.
        public init(maxConnectionsPerUID: Int? = nil, reservedConnections: Int = 0,
                    isPrivileged: @escaping (PeerCredentials) -> Bool = { $0.uid == 0 }) {
            precondition(maxConnectionsPerUID.map { $0 > 0 } ?? true, "maxConnectionsPerUID must be positive")
            precondition(reservedConnections >= 0, "reservedConnections must not be negative")
            self.maxConnectionsPerUID = maxConnectionsPerUID
            self.reservedConnections = reservedConnections
            self.isPrivileged = isPrivileged
        }
    }

    /// Why a connection was refused.
    public enum Refusal: Hashable, Sendable, CustomStringConvertible {
        /// `maxConnections` connections are open.
        case listenerFull
        /// The peer's uid holds `maxConnectionsPerUID` connections.
        case perUIDLimit
        /// Only the slots reserved for privileged peers are left.
        case reservedForPrivileged

        public var description: String {
            switch self {
            case .listenerFull: "all connections are in use"
            case .perUIDLimit: "the user holds the most connections one user may open"
            case .reservedForPrivileged: "the remaining connections are reserved for administrators"
            }
        }
    }

    /// The listening socket; the listener owns it and closes it in `close()`.
    public let descriptor: FileDescriptor
    /// Most connections open at once.
    public let maxConnections: Int
    /// The per-uid limit and the privileged reserve.
    public let admission: Admission
    /// The limits every accepted connection gets.
    public let connectionLimits: StreamConnection.Limits
    /// Whether accepted connections collect each message's sender credentials.
    public let receivesSenderCredentials: Bool
    /// How long accepting pauses after a resource failure.
    public let acceptRetryDelay: Duration
    /// Connections accepted and still open.
    public private(set) var connectionCount = 0
    /// Open connections per uid (uids with none are absent).
    public private(set) var connectionsByUID: [uid_t: Int] = [:]

    /// Receives each new connection and its peer; set `onRead`/`onClose` on it here.
    public var onConnection: (StreamConnection, PeerCredentials) -> Void = { connection, _ in connection.close() }
    /// Told about a refused connection (credentials when they could be read).
    public var onConnectionRefused: (PeerCredentials?, Refusal) -> Void = { _, _ in }
    /// Told about a failed accept or a connection that could not be set up.
    public var onAcceptError: (Errno) -> Void = { _ in }

    private let loop: EventLoop
    private let outputBudget: OutputBudget?
    private var registration: Registration?
    private var retryTimer: TimerHandle?
    private let acceptsPerWakeUp = 64

    /// Starts accepting on `descriptor`, a listening, non-blocking stream socket (from
    /// `UnixSocket.listen` or handed over by systemd socket activation).
    /// - Parameters:
    ///   - outputBudget: bounds the output of all its connections together (shared with
    ///     other listeners if given to them too).
    ///   - receivesSenderCredentials: see `StreamConnection`; set on the listening socket too,
    ///     so bytes sent before the connection is accepted carry their sender as well.
    public init(descriptor: FileDescriptor, loop: EventLoop, maxConnections: Int,
                admission: Admission = Admission(),
                connectionLimits: StreamConnection.Limits = .init(), outputBudget: OutputBudget? = nil,
                receivesSenderCredentials: Bool = false,
                acceptRetryDelay: Duration = .milliseconds(100)) throws(Errno) {
        precondition(maxConnections > 0, "maxConnections must be positive")
        precondition(admission.reservedConnections < maxConnections, "the reserve must leave room for others")
        self.descriptor = descriptor
        self.loop = loop
        self.maxConnections = maxConnections
        self.admission = admission
        self.connectionLimits = connectionLimits
        self.outputBudget = outputBudget
        self.receivesSenderCredentials = receivesSenderCredentials
        self.acceptRetryDelay = acceptRetryDelay
        // Socket activation may hand over a blocking socket; accepting must never block.
        try descriptor.setNonBlocking()
        if receivesSenderCredentials { try StreamConnection.enableSenderCredentials(on: descriptor) }
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
        if let refusal = refusal(of: credentials) {
            try? socket.close()
            onConnectionRefused(credentials, refusal)
            return
        }
        let connection: StreamConnection
        do {
            connection = try StreamConnection(descriptor: socket, loop: loop, limits: connectionLimits,
                                              budget: outputBudget,
                                              receivesSenderCredentials: receivesSenderCredentials)
        } catch {
            try? socket.close()
            onAcceptError(error)
            return
        }
        let uid = credentials.uid
        connectionCount += 1
        connectionsByUID[uid, default: 0] += 1
        connection.closeObserver = { [weak self] in
            guard let self else { return }
            connectionCount -= 1
            connectionsByUID[uid]! -= 1
            if connectionsByUID[uid] == 0 { connectionsByUID[uid] = nil }
        }
        onConnection(connection, credentials)
    }

    /// Why `peer` may not have a connection now, or nil when it may.
    private func refusal(of peer: PeerCredentials) -> Refusal? {
        guard connectionCount < maxConnections else { return .listenerFull }
        let unreserved = maxConnections - admission.reservedConnections
        let limited = connectionCount >= unreserved
            || admission.maxConnectionsPerUID.map { connectionsByUID[peer.uid, default: 0] >= $0 } ?? false
        // Ask about privilege only when it matters: it may read /proc.
        guard limited, !admission.isPrivileged(peer) else { return nil }
        return connectionCount >= unreserved ? .reservedForPrivileged : .perUIDLimit
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
