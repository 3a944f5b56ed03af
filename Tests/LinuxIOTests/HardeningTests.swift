import CLinux
import Foundation
import Glibc
@testable import LinuxIO
import Testing

/// Connects to `path` as effective user and group `uid` (this thread only; the kernel records
/// the connecting thread's credentials), then turns back into root.
private func connect(to path: String, asUID uid: uid_t) throws -> Client {
    try #require(clinux_thread_set_effective_ids(uid, uid) == 0)
    defer { _ = clinux_thread_set_effective_ids(0, 0) }
    return try Client(path: path)
}

/// Sends all of `bytes` with MSG_NOSIGNAL (the server may have closed the connection:
/// that must be an error here, not a SIGPIPE that ends the test process).
private func sendAll(_ bytes: [UInt8], to client: Client) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let sent = bytes.withUnsafeBytes { raw in
            try? client.descriptor.send(UnsafeRawBufferPointer(rebasing: raw[offset...]))
        }
        guard let sent else { return false }
        offset += sent
    }
    return true
}

/// Whether the server keeps `client`'s connection: it echoes a message.
private func isServed(_ client: Client) -> Bool {
    let message = Array("ping".utf8) + [0]
    guard sendAll(message, to: client) else { return false }
    return (try? client.receive(count: message.count)) == message
}

private let nobody: uid_t = 65534
private let otherUser: uid_t = 65533

/// Issue 11, connection exhaustion: one uid holding every connection made every other
/// user's Register fail. Tests run as root, and connect as other users from one thread.
@Suite(.serialized) struct AdmissionTests {
    @Test func oneUserAtItsLimitLeavesRoomForAnother() throws {
        let server = try EchoServer(admission: .init(maxConnectionsPerUID: 2))
        let held = try (0..<2).map { _ in try connect(to: server.path, asUID: nobody) }
        defer { held.forEach { $0.close() } }
        #expect(held.allSatisfy(isServed))

        let extra = try connect(to: server.path, asUID: nobody)
        defer { extra.close() }
        #expect(!isServed(extra))
        #expect(eventually { server.refusals.value == [.perUIDLimit] })
        #expect(server.refused.value.first??.uid == nobody)

        let other = try connect(to: server.path, asUID: otherUser)
        defer { other.close() }
        #expect(isServed(other))
        // Root is privileged: no per-uid limit.
        let roots = try (0..<3).map { _ in try Client(path: server.path) }
        defer { roots.forEach { $0.close() } }
        #expect(roots.allSatisfy(isServed))
    }

    @Test func theReserveIsKeptForPrivilegedPeers() throws {
        let server = try EchoServer(maxConnections: 4, admission: .init(reservedConnections: 2))
        let users = try [nobody, otherUser].map { try connect(to: server.path, asUID: $0) }
        defer { users.forEach { $0.close() } }
        #expect(users.allSatisfy(isServed))

        let refused = try connect(to: server.path, asUID: nobody)
        defer { refused.close() }
        #expect(!isServed(refused))
        #expect(eventually { server.refusals.value == [.reservedForPrivileged] })

        let roots = try (0..<2).map { _ in try Client(path: server.path) }
        defer { roots.forEach { $0.close() } }
        #expect(roots.allSatisfy(isServed))
        let overflow = try Client(path: server.path)
        defer { overflow.close() }
        #expect(!isServed(overflow))
        #expect(eventually { server.refusals.value == [.reservedForPrivileged, .listenerFull] })
    }

    /// A connection must be marked established (the daemon: an app registered) in time.
    @Test func aConnectionThatIsNotEstablishedInTimeIsClosed() throws {
        let server = try EchoServer(limits: .init(establishTimeout: .milliseconds(300))) { message, connection in
            if message == Array("register".utf8) { connection.markEstablished() }
            connection.send(message + [0])
        }
        let idle = try Client(path: server.path)
        defer { idle.close() }
        let registered = try Client(path: server.path)
        defer { registered.close() }
        try registered.send(Array("register".utf8) + [0])
        #expect(try registered.receive(count: 9) == Array("register".utf8) + [0])

        #expect(try idle.receiveUntilClosed().isEmpty)
        #expect(eventually { server.closeReasons.value == [.notEstablished] })
        usleep(300_000)
        #expect(isServed(registered))
    }
}

/// Issue 11, unread replies: clients that pipeline calls and never read grew the daemon
/// without bound (each within its own output limit). A shared budget cuts the furthest behind.
@Suite struct OutputBudgetTests {
    @Test func theReaderFurthestBehindIsCutWhenTheBudgetIsSpent() throws {
        let budget = LoopBound(OutputBudget(limit: 1 << 20))
        let server = try EchoServer(outputBudget: budget.value) { message, connection in
            if message == Array("flood".utf8) {
                connection.send([UInt8](repeating: 66, count: 256 * 1024))
            } else {
                connection.send(message + [0])
            }
        }
        let flood = Array("flood".utf8) + [0]
        let modest = try Client(path: server.path)
        defer { modest.close() }
        try modest.send(flood)  // one reply it reads later
        let greedy = try Client(path: server.path)
        defer { greedy.close() }
        var requests = 0
        while server.closeReasons.value.isEmpty, requests < 1000, sendAll(flood, to: greedy) {
            requests += 1
            usleep(1000)
        }
        #expect(eventually { server.closeReasons.value == [.outputBudgetExceeded] })
        // The modest reader keeps its connection and its reply.
        #expect(try modest.receive(count: 256 * 1024).count == 256 * 1024)
        #expect(isServed(modest))
        #expect(server.running.sync { budget.value.connectionsCut } == 1)
        modest.close()
        #expect(eventually { server.running.sync { budget.value.total } == 0 })
    }
}

/// `StreamConnection`'s states: open → draining(reason, acceptsSends) → closed.
@Suite struct StreamConnectionStateTests {
    private func connectionPair() throws -> (Client, LoopBound<StreamConnection>, LoopThread, Shared<[StreamConnection.CloseReason]>) {
        let (clientEnd, serverEnd) = try UnixSocket.pair()
        let client = try Client(descriptor: clientEnd)
        let reasons = Shared<[StreamConnection.CloseReason]>([])
        var connection: LoopBound<StreamConnection>?
        let running = try LoopThread { loop in
            let stream = try StreamConnection(descriptor: serverEnd, loop: loop)
            stream.onClose = { reason in reasons.update { $0.append(reason) } }
            connection = LoopBound(stream)
        }
        return (client, connection!, running, reasons)
    }

    @Test func closeAfterFlushingDrainsWithoutAcceptingSendsThenCloses() throws {
        let (client, server, running, reasons) = try connectionPair()
        defer { running.stop(); client.close() }
        let reply = [UInt8](repeating: 7, count: 4 << 20)  // more than the socket holds
        let (state, pending, pendingAfterSend) = running.sync {
            server.value.send(reply)
            server.value.closeAfterFlushing()
            let pending = server.value.pendingOutputCount
            server.value.send([1, 2, 3])
            return (server.value.state, pending, server.value.pendingOutputCount)
        }
        #expect(state == .draining(reason: .closedLocally, acceptsSends: false))
        #expect(pending > 0 && pendingAfterSend == pending)
        #expect(try client.receiveUntilClosed() == reply)
        #expect(eventually { reasons.value == [.closedLocally] })
        #expect(running.sync { server.value.state } == .closed)
    }

    @Test func aPeerThatHalfClosesStillReceivesLaterSends() throws {
        let (client, server, running, reasons) = try connectionPair()
        defer { running.stop(); client.close() }
        let reply = [UInt8](repeating: 8, count: 4 << 20)
        running.sync { server.value.send(reply) }
        shutdown(client.descriptor.rawValue, CInt(SHUT_WR))
        #expect(eventually { running.sync { server.value.state } == .draining(reason: .peerClosed, acceptsSends: true) })
        running.sync { server.value.send([9, 9]) }
        #expect(try client.receiveUntilClosed() == reply + [9, 9])
        #expect(eventually { reasons.value == [.peerClosed] })
    }

    /// The connection calls `onRead` without retaining it: a handler that replaces itself, or
    /// closes the connection (which drops it), keeps what it captured until it has returned.
    @Test(arguments: [false, true])
    func aReadHandlerThatDropsItselfRunsToItsEnd(closing: Bool) throws {
        let (client, server, running, _) = try connectionPair()
        defer { running.stop(); client.close() }
        let events = Shared<[String]>([])
        running.sync {
            let stream = server.value
            let witness = ReleaseWitness(events)
            stream.onRead = { [witness] input in
                if closing { stream.close() } else { stream.onRead = { $0.bytes.count } }
                witness.note("kept: \(stream.keepsReplacedReadHandler)")
                return input.bytes.count
            }
        }
        try client.send([1])
        #expect(eventually { events.value == ["kept: true", "released"] })
        #expect(!running.sync { server.value.keepsReplacedReadHandler })
    }

    @Test func closeIsFinal() throws {
        let (client, server, running, reasons) = try connectionPair()
        defer { running.stop(); client.close() }
        let (state, pending) = running.sync {
            server.value.close()
            server.value.send([1])
            server.value.closeAfterFlushing()
            return (server.value.state, server.value.pendingOutputCount)
        }
        #expect(state == .closed && pending == 0)
        #expect(reasons.value == [.closedLocally])
        #expect(try client.receiveUntilClosed().isEmpty)
    }
}

@Suite struct ProcessHandleTests {
    @Test func aHandleTellsWhenItsProcessHasExited() throws {
        let own = try ProcessHandle.open(pid: getpid())
        #expect(try own.isAlive)
        let child = fork()
        if child == 0 {
            pause()
            _exit(0)
        }
        try #require(child > 0)
        let handle = try ProcessHandle.open(pid: child)
        #expect(try handle.isAlive)
        kill(child, SIGKILL)
        _ = waitForForkedChild(child)
        #expect(try !handle.isAlive)
        #expect(!handle.refersToSameProcess(as: own))
        #expect(throws: Errno.noSuchProcess) { try ProcessHandle.open(pid: child) }
    }

    @Test func thePeerOfASocketComesWithAHandle() throws {
        let (first, second) = try UnixSocket.pair()
        defer { try? first.close(); try? second.close() }
        let handle = try #require(try PeerCredentials.processHandle(of: first))
        #expect(handle.pid == getpid())
        #expect(handle.refersToSameProcess(as: try ProcessHandle.open(pid: getpid())))
    }
}
