import Foundation
import Glibc
@testable import LinuxIO
import Testing
import TestSupport

/// An echo server of NUL-terminated messages on a fresh socket path, run on its own loop.
final class EchoServer: Sendable {
    let directory: TemporaryDirectory
    let path: String
    let running: LoopThread
    let closeReasons = Shared<[StreamConnection.CloseReason]>([])
    let refused = Shared<[PeerCredentials?]>([])
    let peers = Shared<[PeerCredentials]>([])
    let refusals = Shared<[UnixListener.Refusal]>([])

    init(maxConnections: Int = 64, limits: StreamConnection.Limits = .init(),
         admission: UnixListener.Admission = .init(), outputBudget: OutputBudget? = nil,
         onMessage: @escaping @Sendable ([UInt8], StreamConnection) -> Void = { message, connection in
             connection.send(message + [0])
         }) throws {
        directory = try TemporaryDirectory()
        path = directory.path + "/echo.sock"
        let path = self.path, closeReasons = self.closeReasons, refused = self.refused, peers = self.peers
        let refusals = self.refusals
        // Reachable by other users: the admission tests connect as them.
        chmod(directory.path, 0o755)
        running = try LoopThread { loop in
            let socket = try UnixSocket.listen(path: path, mode: 0o666)
            let listener = try UnixListener(descriptor: socket, loop: loop, maxConnections: maxConnections,
                                            admission: admission, connectionLimits: limits, outputBudget: outputBudget)
            listener.onConnection = { connection, credentials in
                peers.update { $0.append(credentials) }
                connection.onRead = { input in
                    consumeMessages(input.bytes) { onMessage(Array($0), connection) }
                }
                connection.onClose = { reason in closeReasons.update { $0.append(reason) } }
            }
            listener.onConnectionRefused = { credentials, refusal in
                refused.update { $0.append(credentials) }
                refusals.update { $0.append(refusal) }
            }
            // The loop's handlers keep the listener alive for the length of the test.
            loop.schedule(after: .seconds(3600)) { _ = listener }
        }
    }

    deinit { running.stop() }
}

@Suite struct StreamConnectionTests {
    @Test func pingPongThroughTheLoop() throws {
        let server = try EchoServer()
        let client = try Client(path: server.path)
        defer { client.close() }
        for index in 0..<1000 {
            let message = Array("ping \(index)".utf8) + [0]
            try client.send(message)
            #expect(try client.receive(count: message.count) == message)
        }
        #expect(server.peers.value == [PeerCredentials(pid: getpid(), uid: getuid(), gid: getgid())])
    }

    @Test func manyPipelinedMessagesSplitAcrossReadsAllArriveInOrder() throws {
        let server = try EchoServer()
        let client = try Client(path: server.path)
        defer { client.close() }
        var messages: [UInt8] = []
        for index in 0..<20_000 { messages += Array("message number \(index)".utf8) + [0] }
        let expected = messages
        let writer = Thread { try? client.send(expected) }
        writer.start()
        let received = try client.receive(count: expected.count)
        #expect(received.count == expected.count)
        #expect(received == expected)
    }

    @Test func messagesSplitAtEveryByteAreReassembled() throws {
        let server = try EchoServer()
        let client = try Client(path: server.path)
        defer { client.close() }
        let message = Array("{\"method\":\"io.proctor.Agent.Decide\"}".utf8) + [0]
        for byte in message {
            try client.send([byte])
            usleep(200)
        }
        #expect(try client.receive(count: message.count) == message)
    }

    @Test func halfAMessageThenSilenceIsClosedAfterTheTimeout() throws {
        let server = try EchoServer(limits: .init(incompleteMessageTimeout: .milliseconds(100)))
        let client = try Client(path: server.path)
        defer { client.close() }
        let start = ContinuousClock.now
        try client.send("complete")
        try client.send([0])
        try client.send("{\"method\":\"half")
        #expect(try client.receiveUntilClosed() == Array("complete".utf8) + [0])
        #expect(ContinuousClock.now - start >= .milliseconds(100))
        #expect(eventually { server.closeReasons.value == [.incompleteMessageTimeout] })
    }

    @Test func completeMessagesKeepAConnectionAliveBeyondTheTimeout() throws {
        let server = try EchoServer(limits: .init(incompleteMessageTimeout: .milliseconds(80)))
        let client = try Client(path: server.path)
        defer { client.close() }
        // Each message completes well within the timeout, though the connection lives longer.
        for _ in 0..<6 {
            try client.send("par")
            usleep(30_000)
            try client.send(Array("t".utf8) + [0])
            #expect(try client.receive(count: 5) == Array("part".utf8) + [0])
        }
        #expect(server.closeReasons.value.isEmpty)
    }

    @Test func anIncompleteMessageOverTheInputLimitIsClosed() throws {
        let server = try EchoServer(limits: .init(maxInputBuffer: 1024))
        let client = try Client(path: server.path)
        defer { client.close() }
        try client.send([UInt8](repeating: 65, count: 4096))
        #expect(try client.receiveUntilClosed().isEmpty)
        #expect(eventually { server.closeReasons.value == [.inputLimitExceeded] })
    }

    @Test func aClientThatNeverReadsIsClosedAtTheOutputLimitWhileOthersAreServed() throws {
        // Every request is answered with 64 KiB; the slow client never reads any of it.
        let server = try EchoServer(limits: .init(maxOutputBuffer: 256 * 1024)) { message, connection in
            if message == Array("flood".utf8) {
                connection.send([UInt8](repeating: 66, count: 64 * 1024))
            } else {
                connection.send(message + [0])
            }
        }
        let slow = try Client(path: server.path)
        defer { slow.close() }
        let polite = try Client(path: server.path)
        defer { polite.close() }
        let flood = [UInt8](repeating: 0, count: 0) + Array("flood".utf8) + [0]
        var requests = 0
        while server.closeReasons.value.isEmpty, requests < 1000 {
            // A send may fail once the server closed the slow connection.
            guard (try? slow.send(flood)) != nil else { break }
            requests += 1
            let ping = Array("ping".utf8) + [0]
            try polite.send(ping)
            #expect(try polite.receive(count: ping.count) == ping)
        }
        #expect(eventually { server.closeReasons.value == [.outputLimitExceeded] })
        let ping = Array("still there".utf8) + [0]
        try polite.send(ping)
        #expect(try polite.receive(count: ping.count) == ping)
    }

    @Test func aClientFloodingRequestsDoesNotStarveAnother() throws {
        // Messages starting with "F" are swallowed; the flood never stops while we ping.
        let server = try EchoServer(limits: .init(maxReadsPerWakeUp: 2)) { message, connection in
            if message.first != UInt8(ascii: "F") { connection.send(message + [0]) }
        }
        let flooder = try Client(path: server.path)
        defer { flooder.close() }
        let pinger = try Client(path: server.path)
        defer { pinger.close() }
        let flooding = Shared(true)
        let flooded = Shared(0)
        var chunk: [UInt8] = []
        for _ in 0..<1000 { chunk += Array("F".utf8) + [UInt8](repeating: 70, count: 62) + [0] }
        let floodChunk = chunk
        Thread.detachNewThread {
            while flooding.value, (try? flooder.send(floodChunk)) != nil { flooded.update { $0 += 1 } }
        }
        defer { flooding.update { $0 = false } }
        #expect(eventually { flooded.value > 10 })
        for index in 0..<50 {
            let ping = Array("ping \(index)".utf8) + [0]
            let start = ContinuousClock.now
            try pinger.send(ping)
            #expect(try pinger.receive(count: ping.count) == ping)
            #expect(ContinuousClock.now - start < .seconds(2))
        }
        #expect(flooding.value)
    }

    @Test func writabilityIsWatchedOnlyWhileOutputIsPending() throws {
        let (clientEnd, serverEnd) = try UnixSocket.pair()
        let client = try Client(descriptor: clientEnd)
        defer { client.close() }
        var connection: LoopBound<StreamConnection>?
        let running = try LoopThread { loop in
            connection = LoopBound(try StreamConnection(descriptor: serverEnd, loop: loop))
        }
        defer { running.stop() }
        let server = connection!
        let writable = UInt32(Interest.writable.rawValue)
        #expect(try watchedEvents(running.loop, serverEnd).map { $0 & writable } == 0)

        // More than the socket buffers hold, so part of it waits in the connection.
        let reply = [UInt8](repeating: 7, count: 4 << 20)
        let pending = running.sync { server.value.send(reply); return server.value.pendingOutputCount }
        #expect(pending > 0)
        #expect(try watchedEvents(running.loop, serverEnd).map { $0 & writable } == writable)

        #expect(try client.receive(count: reply.count) == reply)
        #expect(eventually { running.sync { server.value.pendingOutputCount } == 0 })
        #expect(try watchedEvents(running.loop, serverEnd).map { $0 & writable } == 0)
        running.sync { server.value.close() }
    }

    @Test func closeAfterFlushingDeliversTheLastReplyThenCloses() throws {
        let server = try EchoServer { message, connection in
            connection.send(Array("error: ".utf8) + message + [0])
            connection.closeAfterFlushing()
        }
        let client = try Client(path: server.path)
        defer { client.close() }
        try client.send(Array("bad".utf8) + [0] + Array("ignored".utf8) + [0])
        #expect(try client.receiveUntilClosed() == Array("error: bad".utf8) + [0])
        #expect(eventually { server.closeReasons.value == [.closedLocally] })
    }

    @Test func aPeerThatHalfClosesStillGetsItsReplies() throws {
        let server = try EchoServer()
        let client = try Client(path: server.path)
        defer { client.close() }
        try client.send(Array("one".utf8) + [0] + Array("two".utf8) + [0])
        shutdown(client.descriptor.rawValue, CInt(SHUT_WR))
        #expect(try client.receiveUntilClosed() == Array("one".utf8) + [0] + Array("two".utf8) + [0])
        #expect(eventually { server.closeReasons.value == [.peerClosed] })
    }

    @Test func connectionLimitRefusesTheExtraClientAndFreesItsSlotOnClose() throws {
        let server = try EchoServer(maxConnections: 2)
        let first = try Client(path: server.path)
        let second = try Client(path: server.path)
        defer { second.close() }
        for client in [first, second] {
            try client.send(Array("hi".utf8) + [0])
            #expect(try client.receive(count: 3) == Array("hi".utf8) + [0])
        }
        let third = try Client(path: server.path)
        #expect(try third.receiveUntilClosed().isEmpty)
        third.close()
        #expect(eventually { server.refused.value.count == 1 })
        #expect(server.refused.value.first??.pid == getpid())

        first.close()
        #expect(eventually { server.closeReasons.value == [.peerClosed] })
        let fourth = try Client(path: server.path)
        defer { fourth.close() }
        try fourth.send(Array("back".utf8) + [0])
        #expect(try fourth.receive(count: 5) == Array("back".utf8) + [0])
    }
}

/// `send(appending:)`: output encoded straight into the connection's pending output.
@Suite struct StreamConnectionAppendingTests {
    /// A connection on one end of a socket pair, served by its own loop; the other end is
    /// the blocking client.
    private struct Pair {
        let client: Client
        let running: LoopThread
        let server: LoopBound<StreamConnection>
        let closeReasons = Shared<[StreamConnection.CloseReason]>([])

        init(limits: StreamConnection.Limits = .init()) throws {
            let (clientEnd, serverEnd) = try UnixSocket.pair()
            client = try Client(descriptor: clientEnd)
            var connection: LoopBound<StreamConnection>?
            let closeReasons = self.closeReasons
            running = try LoopThread { loop in
                let stream = try StreamConnection(descriptor: serverEnd, loop: loop, limits: limits)
                stream.onClose = { reason in closeReasons.update { $0.append(reason) } }
                connection = LoopBound(stream)
            }
            server = connection!
        }

        /// Appends `bytes` in place, on the loop's thread; returns the output still pending.
        func send(_ bytes: [UInt8]) -> Int {
            let server = self.server
            return running.sync {
                server.value.send { $0.append(contentsOf: bytes) }
                return server.value.pendingOutputCount
            }
        }

        var outputCapacity: Int {
            let server = self.server
            return running.sync { server.value.outputCapacity }
        }

        var outputStorage: UInt? {
            let server = self.server
            return running.sync { server.value.outputStorage.map { UInt(bitPattern: $0) } }
        }

        func stop() {
            let server = self.server
            running.sync { server.value.close() }
            running.stop()
            client.close()
        }
    }

    @Test func outputAppendedWhileAnEarlierReplyIsPartlyWrittenFollowsIt() throws {
        let pair = try Pair()
        defer { pair.stop() }
        // More than the socket buffers hold: most of it stays pending, and the next reply is
        // appended behind what is left of it.
        let large = [UInt8](repeating: 7, count: 4 << 20)
        let tail = Array("tail".utf8)
        #expect(pair.send(large) > 0)
        #expect(pair.send(tail) > tail.count)
        #expect(try pair.client.receive(count: large.count + tail.count) == large + tail)
        #expect(eventually { pair.running.sync { [server = pair.server] in server.value.pendingOutputCount } == 0 })
        // Written out: a buffer that large is given back.
        #expect(pair.outputCapacity <= StreamConnection.keptOutputCapacity)
    }

    @Test func aSmallBufferIsKeptForTheNextRepliesAndALargerReplyStillGoesOutWhole() throws {
        let pair = try Pair()
        defer { pair.stop() }
        // Nothing pending: each reply is written at once, from the buffer it was appended to.
        let small = Array("small reply".utf8)
        #expect(pair.send(small) == 0)
        #expect(try pair.client.receive(count: small.count) == small)
        // Kept: emptied, not given back. Its exact capacity is malloc's choice (and a buffer the
        // emptying finds shared is reallocated with at least that capacity), so it is bounded,
        // never compared for equality.
        let kept = pair.outputCapacity
        #expect(kept >= small.count && kept <= StreamConnection.keptOutputCapacity)
        #expect(pair.send(small.reversed()) == 0)
        #expect(try pair.client.receive(count: small.count) == small.reversed())
        #expect(pair.outputCapacity >= kept && pair.outputCapacity <= StreamConnection.keptOutputCapacity)
        // Larger than the kept buffer, but within the socket's: grown, written whole, given back.
        let larger = (0..<(16 * 1024)).map { UInt8(truncatingIfNeeded: $0) }
        #expect(pair.send(larger) == 0)
        #expect(try pair.client.receive(count: larger.count) == larger)
        #expect(pair.outputCapacity <= StreamConnection.keptOutputCapacity)
        #expect(pair.send(small) == 0)
        #expect(try pair.client.receive(count: small.count) == small)
        #expect(pair.outputCapacity >= small.count && pair.outputCapacity <= StreamConnection.keptOutputCapacity)
    }

    @Test func theKeptBufferIsReusedForEachSmallReplyNotReallocated() throws {
        let pair = try Pair()
        defer { pair.stop() }
        let small = Array("small reply".utf8)
        #expect(pair.send(small) == 0)
        #expect(try pair.client.receive(count: small.count) == small)
        let kept = try #require(pair.outputStorage)
        for round in 0..<8 {
            #expect(pair.send(small) == 0)
            #expect(try pair.client.receive(count: small.count) == small)
            #expect(pair.outputStorage == kept, "reply \(round): the kept buffer was reallocated")
        }
    }

    /// Replies written stay in the kept buffer, behind the pending output, while it has room
    /// for as much again: it holds several replies of a few hundred bytes before it is
    /// emptied, is never reallocated for them, and each goes out whole and in order.
    @Test func theKeptBufferHoldsSeveralRepliesBeforeItIsEmptied() throws {
        let pair = try Pair()
        defer { pair.stop() }
        let reply = (0..<300).map { UInt8(truncatingIfNeeded: $0) }
        #expect(pair.send(reply) == 0)
        #expect(try pair.client.receive(count: reply.count) == reply)
        #expect(pair.outputCapacity >= StreamConnection.keptOutputMinimum)
        #expect(pair.outputCapacity <= StreamConnection.keptOutputCapacity)
        let kept = try #require(pair.outputStorage)
        for round in 1...20 {
            let next = reply.map { $0 &+ UInt8(round) }
            #expect(pair.send(next) == 0)
            #expect(try pair.client.receive(count: next.count) == next, "reply \(round)")
            #expect(pair.outputStorage == kept, "reply \(round): the kept buffer was reallocated")
        }
    }

    /// Replies of every size, behind whatever the kept buffer still holds of earlier ones:
    /// the peer gets exactly the bytes appended, in order.
    @Test func repliesOfEverySizeGoOutWholeBehindEarlierOnes() throws {
        let pair = try Pair()
        defer { pair.stop() }
        var generator = SystemRandomNumberGenerator()
        for round in 0..<60 {
            let count = [1, 7, 300, 1023, 1500, 2049, 4000, 5000][round % 8] + Int.random(in: 0..<3, using: &generator)
            let next = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ round) }
            #expect(pair.send(next) == 0)
            #expect(try pair.client.receive(count: next.count) == next, "reply \(round) of \(count) bytes")
            #expect(pair.outputCapacity <= StreamConnection.keptOutputCapacity)
        }
    }

    @Test func outputAppendedPastTheLimitClosesTheConnection() throws {
        let pair = try Pair(limits: .init(maxOutputBuffer: 1024))
        defer { pair.stop() }
        #expect(pair.send([UInt8](repeating: 1, count: 1025)) == 0)
        #expect(try pair.client.receiveUntilClosed().isEmpty)
        #expect(pair.closeReasons.value == [.outputLimitExceeded])
    }

    @Test func whatIsAppendedIsDroppedWhenTheConnectionClosesMeanwhileOrAlreadyStoppedSending() throws {
        // Closed while the caller appends (an output budget may cut the connection then).
        let closing = try Pair()
        defer { closing.stop() }
        let ran = closing.running.sync { [server = closing.server] in
            var ran = false
            server.value.send { output in
                output.append(contentsOf: Array("dropped".utf8))
                server.value.close()
                ran = true
            }
            return ran && !server.value.isOpen && server.value.pendingOutputCount == 0
        }
        #expect(ran)
        #expect(try closing.client.receiveUntilClosed().isEmpty)
        #expect(closing.closeReasons.value == [.closedLocally])

        // After closeAfterFlushing(), with output still pending: the closure still runs,
        // what it appends is not sent.
        let draining = try Pair()
        defer { draining.stop() }
        let last = [UInt8](repeating: 9, count: 4 << 20)
        let appended = draining.running.sync { [server = draining.server] in
            server.value.send { $0.append(contentsOf: last) }
            server.value.closeAfterFlushing()
            var appended = false
            server.value.send { output in
                output.append(contentsOf: Array("too late".utf8))
                appended = true
            }
            return appended
        }
        #expect(appended)
        #expect(try draining.client.receiveUntilClosed() == last)
    }
}
