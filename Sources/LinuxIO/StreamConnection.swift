/// A connected, non-blocking stream socket served by an `EventLoop`, with bounded buffers.
///
/// Input: each read hands the owner's `onRead` the bytes received so far that it has not
/// consumed yet; `onRead` returns how many it consumed (whole messages), and the connection
/// keeps the rest — an incomplete message — for the next read. That leftover is bounded by
/// `Limits.maxInputBuffer` and must complete within `Limits.incompleteMessageTimeout`, so a
/// client sending half a message and then nothing is closed instead of held forever.
///
/// Output: `send` writes at once when it can and keeps what the socket does not take; the
/// connection listens for writability only while output is pending. Replies sent from inside
/// `onRead` are gathered and written with one call after the read. A client that does not read
/// its replies fills `Limits.maxOutputBuffer` and is closed rather than buffered without bound.
///
/// Fairness: one wake-up reads at most `Limits.maxReadsPerWakeUp` chunks; the loop is
/// level-triggered, so the rest is read after the other ready descriptors had their turn.
///
/// All methods must be called on the loop's thread. `onClose` is called exactly once.
public final class StreamConnection {
    /// The bounds a connection holds its peer to.
    public struct Limits: Hashable, Sendable {
        /// Most bytes of unconsumed input (an incomplete message) kept between reads.
        public var maxInputBuffer: Int
        /// Most bytes of output kept waiting for the peer to read.
        public var maxOutputBuffer: Int
        /// How long an incomplete message may stay incomplete; nil waits forever.
        public var incompleteMessageTimeout: Duration?
        /// Most reads served per readiness report before other descriptors get their turn.
        public var maxReadsPerWakeUp: Int

        /// Limits with the given bounds; the defaults suit a request/reply protocol with
        /// messages up to about 1 MiB.
        public init(maxInputBuffer: Int = (1 << 20) + 64 * 1024, maxOutputBuffer: Int = 8 << 20,
                    incompleteMessageTimeout: Duration? = .seconds(30), maxReadsPerWakeUp: Int = 16) {
            precondition(maxInputBuffer > 0 && maxOutputBuffer > 0 && maxReadsPerWakeUp > 0)
            self.maxInputBuffer = maxInputBuffer
            self.maxOutputBuffer = maxOutputBuffer
            self.incompleteMessageTimeout = incompleteMessageTimeout
            self.maxReadsPerWakeUp = maxReadsPerWakeUp
        }
    }

    /// Why a connection closed.
    public enum CloseReason: Hashable, Sendable, CustomStringConvertible {
        /// The peer closed its end (after any pending output was delivered, or could not be).
        case peerClosed
        /// The owner called `close()` or `closeAfterFlushing()`.
        case closedLocally
        /// The peer sent more than `maxInputBuffer` bytes that did not complete a message.
        case inputLimitExceeded
        /// The peer did not read its replies and more than `maxOutputBuffer` bytes piled up.
        case outputLimitExceeded
        /// An incomplete message stayed incomplete longer than `incompleteMessageTimeout`.
        case incompleteMessageTimeout
        /// Reading or writing failed (`.connectionReset`, `.brokenPipe`, …).
        case failed(Errno)

        public var description: String {
            switch self {
            case .peerClosed: "the peer closed the connection"
            case .closedLocally: "closed by this side"
            case .inputLimitExceeded: "the peer sent an incomplete message over the input limit"
            case .outputLimitExceeded: "the peer did not read its replies; output limit reached"
            case .incompleteMessageTimeout: "the peer left a message incomplete past the timeout"
            case .failed(let errno): "I/O failed: \(errno)"
            }
        }
    }

    /// The connected socket (closed by the connection when it closes).
    public let descriptor: FileDescriptor
    /// The bounds in force.
    public let limits: Limits
    /// Called with the unconsumed input after each read; returns how many leading bytes it
    /// consumed (0 up to the buffer's count). The buffer is valid only during the call.
    /// The default consumes and drops everything.
    public var onRead: (UnsafeRawBufferPointer) -> Int = { $0.count }
    /// Called once when the connection closes, with the reason.
    public var onClose: (CloseReason) -> Void = { _ in }

    /// Whether the connection is still open.
    public private(set) var isOpen = true
    /// Bytes sent but not yet taken by the socket.
    public var pendingOutputCount: Int { output.count - outputStart }
    /// Bytes received but not yet consumed by `onRead` (an incomplete message).
    public var bufferedInputCount: Int { input.count }

    private let loop: EventLoop
    private var registration: Registration?
    private var interest: Interest = .readable
    private var isReading = true
    private var closesWhenFlushed = false
    private var closeRequested = false
    private var closeReasonAfterFlush: CloseReason = .closedLocally
    private var isDeliveringInput = false
    private var input: [UInt8] = []
    private var output: [UInt8] = []
    private var outputStart = 0
    private var incompleteSince: UInt64?
    private var incompleteTimer: TimerHandle?
    /// Told when the connection closes, before `onClose` (the listener counts connections).
    var closeObserver: (() -> Void)?

    /// Takes over the connected non-blocking socket `descriptor` and starts reading it on
    /// `loop`; set `onRead` and `onClose` before returning control to the loop.
    public init(descriptor: FileDescriptor, loop: EventLoop, limits: Limits = Limits()) throws(Errno) {
        self.descriptor = descriptor
        self.loop = loop
        self.limits = limits
        registration = try loop.register(descriptor, events: .readable) { [unowned self] readiness in
            handle(readiness)
        }
    }

    deinit {
        // Dropped while open (the owner let go without closing): release everything quietly.
        guard isOpen else { return }
        if let registration { loop.unregister(registration) }
        if let incompleteTimer { loop.cancel(incompleteTimer) }
        try? descriptor.close()
        closeObserver?()
    }

    // MARK: output

    /// Queues `bytes` for the peer, writing at once when possible. Closes the connection with
    /// `.outputLimitExceeded` when the pending output would pass `maxOutputBuffer`. Ignored
    /// once the connection is closed or `closeAfterFlushing()` was called.
    public func send(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { send(contentsOf: $0) }
    }

    /// Queues a copy of `bytes`, as `send(_:)` does.
    public func send(contentsOf bytes: UnsafeRawBufferPointer) {
        guard isOpen, !closeRequested, !bytes.isEmpty else { return }
        guard pendingOutputCount + bytes.count <= limits.maxOutputBuffer else {
            close(reason: .outputLimitExceeded)
            return
        }
        var remaining = bytes
        if pendingOutputCount == 0, !isDeliveringInput {
            do {
                let sent = try descriptor.send(bytes)
                remaining = UnsafeRawBufferPointer(rebasing: bytes[sent...])
            } catch .wouldBlock {
            } catch {
                close(reason: .failed(error))
                return
            }
        }
        guard !remaining.isEmpty else { return }
        output.append(contentsOf: remaining)
        if !isDeliveringInput { updateInterest() }
    }

    /// Writes pending output until the socket is full; returns false if the connection closed.
    @discardableResult
    private func flush() -> Bool {
        while outputStart < output.count {
            let sent: Int
            do {
                sent = try output.withUnsafeBytes { raw in
                    Result { () throws(Errno) in
                        try descriptor.send(UnsafeRawBufferPointer(rebasing: raw[outputStart...]))
                    }
                }.get()
            } catch .wouldBlock {
                break
            } catch {
                close(reason: .failed(error))
                return false
            }
            let requested = output.count - outputStart
            outputStart += sent
            if sent < requested { break }  // the socket buffer is full: wait for writability
        }
        if outputStart == output.count {
            // Keep a small buffer for the next reply; give a large one back.
            output.removeAll(keepingCapacity: output.capacity <= 4096)
            outputStart = 0
            if closesWhenFlushed {
                close(reason: closeReasonAfterFlush)
                return false
            }
        } else if outputStart >= output.count / 2 {
            output.removeFirst(outputStart)
            outputStart = 0
        }
        updateInterest()
        return isOpen
    }

    // MARK: closing

    /// Closes at once, dropping pending output; `onClose(.closedLocally)` follows.
    public func close() {
        close(reason: .closedLocally)
    }

    /// Stops reading and closes once pending output has been delivered (at once if none is
    /// pending), e.g. after sending a final error reply; later `send`s are ignored.
    public func closeAfterFlushing() {
        guard isOpen, !closeRequested else { return }
        closeRequested = true
        stopReading(reason: .closedLocally)
    }

    private func stopReading(reason: CloseReason) {
        isReading = false
        input = []
        incompleteSince = nil
        if pendingOutputCount == 0, !isDeliveringInput {
            close(reason: reason)
        } else {
            closesWhenFlushed = true
            closeReasonAfterFlush = reason
            if !isDeliveringInput { updateInterest() }
        }
    }

    private func close(reason: CloseReason) {
        guard isOpen else { return }
        isOpen = false
        if let registration { loop.unregister(registration) }
        registration = nil
        try? descriptor.close()
        if let incompleteTimer { loop.cancel(incompleteTimer) }
        incompleteTimer = nil
        input = []
        output = []
        outputStart = 0
        let handler = onClose
        // Drop the owner's closures: they usually capture the owner, which holds this object.
        onClose = { _ in }
        onRead = { $0.count }
        closeObserver?()
        closeObserver = nil
        handler(reason)
    }

    // MARK: readiness

    private func handle(_ readiness: Readiness) {
        if readiness.contains(.writable) || (pendingOutputCount > 0 && !readiness.isDisjoint(with: [.hangup, .error])) {
            guard flush() else { return }
        }
        if isReading, !readiness.isDisjoint(with: [.readable, .hangup, .error]) {
            readAvailable()
        } else if !isReading, !readiness.isDisjoint(with: [.hangup, .error]), pendingOutputCount == 0 {
            close(reason: closesWhenFlushed ? closeReasonAfterFlush : .peerClosed)
        }
    }

    private func readAvailable() {
        let buffer = loop.readBuffer
        var reads = 0
        isDeliveringInput = true
        while isOpen, isReading, reads < limits.maxReadsPerWakeUp {
            reads += 1
            let count: Int
            do {
                count = try descriptor.read(into: buffer)
            } catch .wouldBlock {
                break
            } catch {
                isDeliveringInput = false
                close(reason: .failed(error))
                return
            }
            if count == 0 {
                // End of file: deliver what was asked for, then close.
                isDeliveringInput = false
                stopReading(reason: .peerClosed)
                if isOpen { flush() }
                return
            }
            deliver(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            if count < buffer.count { break }  // a short read drained the socket
        }
        isDeliveringInput = false
        guard isOpen else { return }
        if closesWhenFlushed, pendingOutputCount == 0 {
            close(reason: closeReasonAfterFlush)
        } else if pendingOutputCount > 0 {
            flush()
        } else {
            updateInterest()
        }
    }

    private func deliver(_ chunk: UnsafeRawBufferPointer) {
        let consumed: Int
        let leftover: Int
        if input.isEmpty {
            // The common case: no incomplete message is pending, so hand over the loop's
            // buffer directly and copy only what the owner leaves.
            consumed = onRead(chunk)
            precondition((0...chunk.count).contains(consumed), "onRead consumed \(consumed) of \(chunk.count) bytes")
            guard isOpen, isReading else { return }
            leftover = chunk.count - consumed
            if leftover > 0 { input.append(contentsOf: chunk[consumed...]) }
        } else {
            // Move the buffer out while the owner reads it, so a close() from inside onRead
            // does not touch an array that is being read.
            var pending = input
            input = []
            pending.append(contentsOf: chunk)
            consumed = pending.withUnsafeBytes { onRead($0) }
            precondition((0...pending.count).contains(consumed), "onRead consumed \(consumed) of \(pending.count) bytes")
            guard isOpen, isReading else { return }
            leftover = pending.count - consumed
            if leftover > 0 {
                pending.removeFirst(consumed)
                input = pending
            }
        }
        guard leftover > 0 else {
            incompleteSince = nil
            return
        }
        guard leftover <= limits.maxInputBuffer else {
            close(reason: .inputLimitExceeded)
            return
        }
        // A new incomplete message starts when the owner consumed something (or none was
        // pending); a message still growing keeps its start time.
        if consumed > 0 || incompleteSince == nil {
            incompleteSince = EventLoop.now()
            armIncompleteTimer()
        }
    }

    /// One timer per connection, re-armed lazily: when it fires it checks the current
    /// incomplete message instead of being cancelled and re-created on every read.
    private func armIncompleteTimer() {
        guard incompleteTimer == nil, let timeout = limits.incompleteMessageTimeout,
              let since = incompleteSince else { return }
        let deadline = since &+ EventLoop.nanoseconds(timeout)
        incompleteTimer = loop.scheduleTimer(deadline: deadline, period: nil) { [unowned self] in
            incompleteTimer = nil
            guard isOpen, let since = incompleteSince else { return }
            if EventLoop.now() >= since &+ EventLoop.nanoseconds(timeout) {
                close(reason: .incompleteMessageTimeout)
            } else {
                armIncompleteTimer()
            }
        }
    }

    private func updateInterest() {
        guard isOpen, let registration else { return }
        var wanted: Interest = []
        if isReading { wanted.insert(.readable) }
        if pendingOutputCount > 0 { wanted.insert(.writable) }
        guard wanted != interest else { return }
        do {
            try loop.modify(registration, events: wanted)
            interest = wanted
        } catch {
            close(reason: .failed(error))
        }
    }
}
