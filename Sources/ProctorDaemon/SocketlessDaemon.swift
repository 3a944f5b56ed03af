package import LinuxIO
import ProctorPolicy
package import Varlink

/// proctord's own code — the same `Daemon`, Agent and Admin services, method handlers,
/// policy updates and SQLite state store — without sockets or a thread of its own: a client
/// is a `Connection` fed bytes on the calling thread, and the daemon's event loop runs on
/// that thread when asked (`settle()`). Made for the handler fuzz target
/// (`Fuzz/HandlerFuzz.swift`), which sends millions of calls through the real handlers: a
/// socket round trip and a thread hop per call would cost more than the call, so policy
/// changes are compiled on this thread too.
///
/// As with `InProcessDaemon`, every caller is this process, so identities are not checked,
/// and the log goes nowhere. Use it from one thread.
package final class SocketlessDaemon {
    /// Why the daemon could not start.
    package struct StartFailure: Error, CustomStringConvertible {
        package let description: String
    }

    /// Which of proctord's sockets a connection is made on.
    package enum Socket: Sendable {
        case agent
        case admin
    }

    private let daemon: Daemon
    private let agentService: VarlinkService<ConnectionContext>
    private let adminService: VarlinkService<ConnectionContext>
    private var isStopped = false

    /// A daemon on `directory` (laid out as for `InProcessDaemon`: `config/policy.d` must hold
    /// the policy, state goes to `state`), ready for connections.
    package init(directory: String) throws(StartFailure) {
        do throws(StartupError) {
            let loop: EventLoop
            do {
                loop = try EventLoop()
            } catch {
                throw StartupError(message: "cannot set up an event loop: \(error)", errno: error.rawValue)
            }
            daemon = try Daemon.inProcess(.inProcess(directory: directory), loop: loop)
            daemon.runsPolicyWorkInline = true
            (agentService, adminService) = try daemon.makeServices()
        } catch {
            throw StartFailure(description: error.message)
        }
    }

    // The state is closed whatever the loop says: nobody is left to hear a failure here.
    deinit { try? stop() }

    /// A client connected to `socket`; on the admin socket, `administrator` says whether it
    /// is root or in the admin group (every Admin call checks). `answersDirectly` false sends
    /// every call the general way, not `Decide` from its bytes (tests compare the two).
    package func connect(to socket: Socket, administrator: Bool = true, answersDirectly: Bool = true) -> Connection {
        let context = ConnectionContext(peer: daemon.testContext.peer, mayAdminister: administrator)
        let connection = switch socket {
        case .agent: VarlinkConnection(service: agentService, context: context,
                                       maxMessageBytes: daemon.configuration.maxMessageBytes)
        case .admin: VarlinkConnection(service: adminService, context: context, maxMessageBytes: PolicyLimits.maxRequestBytes)
        }
        connection.answersDirectly = answersDirectly
        return Connection(connection, daemon: daemon)
    }

    /// Runs the event loop until no policy change is under way, at least one turn, so due
    /// timers fire (the batched write of the event history). A change is read and compiled
    /// on this thread when it starts (`Daemon.runsPolicyWorkInline`: no thread hop to wait
    /// for), and finishes, replying, on the loop's next turn.
    package func settle() throws(Errno) {
        repeat {
            let stop = daemon.loop.schedule(after: .zero) { [daemon] in daemon.loop.stop() }
            defer { daemon.loop.cancel(stop) }
            try daemon.loop.run()
        } while daemon.policyUpdates.isRunning
    }

    /// Agent calls answered from their bytes (`VarlinkDirectMethod`), not the general way.
    package var directlyAnsweredCalls: Int { agentService.directlyAnsweredCalls }

    /// The version and SHA-256 of the policy in force.
    package var policyInForce: (version: String, sha256: String) { (daemon.active.version, daemon.active.sha256) }

    /// Stops as proctord does: the pending events are written and the store and the lock
    /// are closed, so another daemon may start on the directory. Connections must be closed.
    package func stop() throws(Errno) {
        guard !isStopped else { return }
        isStopped = true
        defer { daemon.closeState() }
        try settle()
    }

    /// One client's connection: bytes in, replies out.
    package final class Connection {
        private let connection: VarlinkConnection<ConnectionContext>
        private let daemon: Daemon
        private var laterOutput = VarlinkConnectionOutput()

        fileprivate init(_ connection: VarlinkConnection<ConnectionContext>, daemon: Daemon) {
            self.connection = connection
            self.daemon = daemon
            connection.onLaterOutput = { [unowned self] output in
                laterOutput.bytes += output.bytes
                if laterOutput.close == nil { laterOutput.close = output.close }
            }
        }

        /// Feeds the daemon `bytes` from the client, as if read from its socket.
        package func send(_ bytes: some Collection<UInt8>) {
            let output = connection.receive(bytes)
            laterOutput.bytes += output.bytes
            if laterOutput.close == nil { laterOutput.close = output.close }
        }

        /// What the daemon wrote to the client since the last call (replies of calls sent,
        /// and of calls answered later), and whether it closes the connection.
        package func takeOutput() -> VarlinkConnectionOutput {
            defer { laterOutput = VarlinkConnectionOutput() }
            return laterOutput
        }

        /// The client hangs up (or the daemon closed): open calls are cancelled and the
        /// connection's sessions end.
        package func close() {
            connection.closed()
            daemon.connectionClosed(connection.context)
        }
    }
}
