import CLinux

/// A connected, non-blocking stream socket served by an `EventLoop`, with bounded buffers.
///
/// Input: each read hands the owner's `onRead` the bytes received so far that it has not
/// consumed yet, marking where this read's bytes begin (so a framer scans only those);
/// `onRead` returns how many it consumed (whole messages), and the connection keeps the
/// rest — an incomplete message — for the next read. That leftover is bounded by
/// `Limits.maxInputBuffer` and must complete within `Limits.incompleteMessageTimeout`, so a
/// client sending half a message and then nothing is closed instead of held forever.
/// With `receivesSenderCredentials`, each read also says which process wrote its bytes.
///
/// Output: `send` writes at once when it can and keeps what the socket does not take; the
/// connection listens for writability only while output is pending. Replies sent from inside
/// `onRead` are gathered and written with one call after the read; `send(appending:)` has
/// them encoded straight into the pending output, whose buffer is kept while it is small. A client that does not read
/// its replies fills `Limits.maxOutputBuffer` and is closed rather than buffered without bound;
/// an `OutputBudget` shared by many connections bounds their sum as well.
///
/// Lifecycle (`State`): open → draining (stopped reading; closes once pending output is
/// delivered) → closed. A connection that must be marked established
/// (`Limits.establishTimeout`) and is not, in time, is closed.
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
        /// How long the connection may stay unestablished (`markEstablished()` not called);
        /// nil: forever.
        public var establishTimeout: Duration?

        /// Limits with the given bounds; the defaults suit a request/reply protocol with
        /// messages up to about 1 MiB.
        public init(maxInputBuffer: Int = (1 << 20) + 64 * 1024, maxOutputBuffer: Int = 8 << 20,
                    incompleteMessageTimeout: Duration? = .seconds(30), maxReadsPerWakeUp: Int = 16,
                    establishTimeout: Duration? = nil) {
            precondition(maxInputBuffer > 0 && maxOutputBuffer > 0 && maxReadsPerWakeUp > 0)
            self.maxInputBuffer = maxInputBuffer
            self.maxOutputBuffer = maxOutputBuffer
            self.incompleteMessageTimeout = incompleteMessageTimeout
            self.maxReadsPerWakeUp = maxReadsPerWakeUp
            self.establishTimeout = establishTimeout
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
        /// The output of all connections sharing an `OutputBudget` passed it, and this one
        /// held the most unread output.
        case outputBudgetExceeded
        /// The owner did not call `markEstablished()` within `establishTimeout`.
        case notEstablished
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
            case .outputBudgetExceeded: "the peer held the most unread output when the total output budget was reached"
            case .notEstablished: "the peer did not establish itself (register) in time"
            case .incompleteMessageTimeout: "the peer left a message incomplete past the timeout"
            case .failed(let errno): "I/O failed: \(errno)"
            }
        }
    }

    /// What a connection is doing; `send` and reading depend on it.
    enum State: Equatable {
        /// Reading and writing.
        case open
        /// No longer reading (input is dropped); closes with `reason` once pending output is
        /// delivered. `acceptsSends`: whether later `send`s still queue output (a peer that
        /// half-closed still gets the replies to what it sent; after `closeAfterFlushing()`
        /// nothing more is sent).
        case draining(reason: CloseReason, acceptsSends: Bool)
        case closed
    }

    /// Bytes received and not yet consumed, handed to `onRead`.
    public struct ReceivedInput {
        /// Every byte received and not consumed yet; valid only during the `onRead` call.
        public let bytes: UnsafeRawBufferPointer
        /// Where the bytes of the latest read begin. The bytes before were offered to `onRead`
        /// earlier and left unconsumed, so a framer need not scan them again.
        public let newBytesStart: Int
        /// Who wrote `bytes[..<newBytesStart]`; nil when unknown or when several senders did.
        public let earlierSender: SenderCredentials?
        /// Who wrote `bytes[newBytesStart...]` (one read never mixes senders); nil when unknown.
        public let sender: SenderCredentials?

        public init(bytes: UnsafeRawBufferPointer, newBytesStart: Int,
                    earlierSender: SenderCredentials? = nil, sender: SenderCredentials? = nil) {
            precondition((0...bytes.count).contains(newBytesStart))
            self.bytes = bytes
            self.newBytesStart = newBytesStart
            self.earlierSender = earlierSender
            self.sender = sender
        }

        /// The bytes of the latest read.
        public var newBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[newBytesStart...]) }

        /// The one sender of `bytes[range]`, or nil when unknown or when the range holds bytes
        /// of more than one sender.
        public func sender(of range: Range<Int>) -> SenderCredentials? {
            guard range.lowerBound < newBytesStart else { return sender }
            guard range.upperBound > newBytesStart else { return earlierSender }
            guard let earlierSender, let sender, earlierSender.isSameSender(as: sender) else { return nil }
            return sender
        }
    }

    /// The connected socket (closed by the connection when it closes).
    public let descriptor: FileDescriptor
    /// The bounds in force.
    public let limits: Limits
    /// Whether each read collects the sender's credentials (SO_PASSCRED, and a pidfd with
    /// SO_PASSPIDFD where the kernel has it).
    public let receivesSenderCredentials: Bool
    /// Whether reads still come with a pidfd for their sender (`SenderCredentials.process`):
    /// the kernel makes one per read, which costs a file and a `close` each time, so an
    /// owner that knows who its peer is turns them off (`receiveSenderProcesses(_:)`).
    public private(set) var receivesSenderProcesses: Bool
    /// Called with the unconsumed input after each read; returns how many leading bytes it
    /// consumed (0 up to `bytes.count`). The buffer is valid only during the call.
    /// The default consumes and drops everything.
    public var onRead: (ReceivedInput) -> Int {
        get { readHandler.call }
        set { replaceReadHandler(with: ReadHandler(newValue)) }
    }
    /// Called once when the connection closes, with the reason.
    public var onClose: (CloseReason) -> Void {
        get { closeHandler }
        set { closeHandler = newValue }
    }

    /// Whether the connection is still open (possibly draining).
    public var isOpen: Bool {
        if case .closed = state { false } else { true }
    }
    /// Whether the owner called `markEstablished()`.
    public private(set) var isEstablished = false
    /// Bytes sent but not yet taken by the socket.
    public var pendingOutputCount: Int { isOutputLent ? 0 : outputCell.pointee.count - outputStart }
    /// Bytes received but not yet consumed by `onRead` (an incomplete message).
    public var bufferedInputCount: Int { input.count }

    private(set) var state = State.open
    // Private storage behind the public closures: every access to it is a plain load or
    // store, so it needs no run-time exclusivity check (a public stored property would).
    private var readHandler = ReadHandler { $0.bytes.count }
    /// The read handler replaced while input was being delivered (by `close` or `onRead`'s
    /// setter, from inside the handler perhaps), kept until the delivery ends: `deliver`
    /// calls the handler without retaining it.
    private var replacedReadHandler: ReadHandler?
    private var closeHandler: (CloseReason) -> Void = { _ in }
    private let loop: EventLoop
    private let budget: OutputBudget?
    /// The pending output `budget` was last told of: it hears of changes only, so a reply
    /// written whole at once costs it nothing.
    private var reportedToBudget = 0
    private var registration: Registration?
    private var interest: Interest = .readable
    /// Set while `onRead` runs: output is gathered and written once afterwards.
    private var isDeliveringInput = false
    private var input: [UInt8] = []
    /// Who wrote `input`; `inputHasSeveralSenders` when more than one process did.
    private var inputSender: SenderCredentials?
    private var inputHasSeveralSenders = false
    /// Pending output from `outputStart` on; the bytes before it were written (`flush`). In
    /// memory of its own, not a stored property: a buffer being written or appended to is
    /// moved out and back (`lendOutput()`, `returnOutput(_:)`), leaving nothing there
    /// meanwhile — swapped out of a property, it left an empty array there, released when the
    /// buffer came back, twice a reply — and no exclusive access to a property spans a call.
    private let outputCell: UnsafeMutablePointer<[UInt8]> = {
        let cell = UnsafeMutablePointer<[UInt8]>.allocate(capacity: 1)
        cell.initialize(to: [])
        return cell
    }()
    private var outputStart = 0
    /// Set while the output buffer is moved out of `outputCell` (`lendOutput()`), there is none
    /// to read or replace; and while `send(appending:)` has lent it to its caller, nothing may
    /// send.
    private var isOutputLent = false
    private var incompleteSince: UInt64?
    private var incompleteTimer: TimerHandle?
    private var establishTimer: TimerHandle?
    /// Told when the connection closes, before `onClose` (the listener counts connections).
    var closeObserver: (() -> Void)?

    private var isReading: Bool {
        if case .open = state { true } else { false }
    }

    /// `onRead` in an object of its own, whose constant member `deliver` borrows: called from
    /// a property of the connection, the closure was retained and released around every
    /// read, two atomic operations.
    private final class ReadHandler {
        let call: (ReceivedInput) -> Int
        init(_ call: @escaping (ReceivedInput) -> Int) { self.call = call }
    }

    /// Replaces the read handler; one that may be running (input is being delivered) is kept
    /// until the delivery ends (`endDelivery()`).
    private func replaceReadHandler(with handler: ReadHandler) {
        if isDeliveringInput, replacedReadHandler == nil { replacedReadHandler = readHandler }
        readHandler = handler
    }

    /// Ends the delivery of a wake-up's reads: handlers replaced meanwhile may go.
    private func endDelivery() {
        isDeliveringInput = false
        if replacedReadHandler != nil { replacedReadHandler = nil }
    }

    /// Whether a replaced read handler is kept (tests check it is while it may still run; in
    /// a debug build the call retains it anyway).
    var keepsReplacedReadHandler: Bool { replacedReadHandler != nil }

    /// Takes over the connected non-blocking socket `descriptor` and starts reading it on
    /// `loop`; set `onRead` and `onClose` before returning control to the loop.
    /// - Parameters:
    ///   - budget: an output budget shared with other connections, if any.
    ///   - receivesSenderCredentials: collect the credentials of the sender of each read.
    ///     Fails only if SO_PASSCRED cannot be set; where SO_PASSPIDFD is refused (kernels
    ///     before 6.5) the credentials come without a pidfd.
    public init(descriptor: FileDescriptor, loop: EventLoop, limits: Limits = Limits(),
                budget: OutputBudget? = nil, receivesSenderCredentials: Bool = false) throws(Errno) {
        self.descriptor = descriptor
        self.loop = loop
        self.limits = limits
        self.budget = budget
        self.receivesSenderCredentials = receivesSenderCredentials
        receivesSenderProcesses = receivesSenderCredentials
        if receivesSenderCredentials { try Self.enableSenderCredentials(on: descriptor) }
        // Unretained in the closure: the loop calls this handler only while it is registered,
        // and the connection unregisters it when it closes and in deinit, so it is alive
        // whenever the handler runs. It is retained for the length of the call, as its owner
        // may let go of it when it closes (in `onClose`): a plain retain and release, which
        // cost less than an `unowned` reference's checked retain.
        let unretainedSelf = Unmanaged.passUnretained(self)
        registration = try loop.register(descriptor, events: .readable) { readiness in
            let retained = unretainedSelf.retain()
            defer { retained.release() }
            retained._withUnsafeGuaranteedRef { $0.handle(readiness) }
        }
        if let timeout = limits.establishTimeout {
            establishTimer = loop.schedule(after: timeout) { [unowned self] in
                establishTimer = nil
                if !isEstablished { close(reason: .notEstablished) }
            }
        }
    }

    /// Sets SO_PASSCRED, and SO_PASSPIDFD where the kernel has it, on a Unix socket (a
    /// listening socket passes both on to the connections it accepts).
    public static func enableSenderCredentials(on socket: FileDescriptor) throws(Errno) {
        try Syscall.setSocketOption(socket.rawValue, CLINUX_SO_PASSCRED, on: true)
        do {
            try Syscall.setSocketOption(socket.rawValue, CLINUX_SO_PASSPIDFD, on: true)
        } catch .invalidArgument, .noProtocolOption {
            // Before kernel 6.5: credentials without a pidfd.
        }
    }

    /// Turns the pidfd of each read's sender off or back on (SO_PASSPIDFD); the pid and ids
    /// keep coming with every read. It applies from the next read on. Ignored without
    /// `receivesSenderCredentials`, on a closed connection, and where the kernel has no
    /// SO_PASSPIDFD.
    public func receiveSenderProcesses(_ on: Bool) {
        guard receivesSenderCredentials, isOpen, on != receivesSenderProcesses else { return }
        do {
            try Syscall.setSocketOption(descriptor.rawValue, CLINUX_SO_PASSPIDFD, on: on)
            receivesSenderProcesses = on
        } catch {
            // Before kernel 6.5 there were no pidfds to turn off; nothing else fails here.
        }
    }

    deinit {
        outputCell.deinitialize(count: 1)
        outputCell.deallocate()
        // Dropped while open (the owner let go without closing): release everything quietly.
        guard isOpen else { return }
        if let registration { loop.unregister(registration) }
        if let incompleteTimer { loop.cancel(incompleteTimer) }
        if let establishTimer { loop.cancel(establishTimer) }
        try? descriptor.close()
        if reportedToBudget != 0 { budget?.update(self, pendingOutput: 0) }
        closeObserver?()
    }

    /// Marks the connection as established (for example: its peer registered), which lifts
    /// `Limits.establishTimeout`.
    public func markEstablished() {
        guard !isEstablished else { return }
        isEstablished = true
        if let establishTimer { loop.cancel(establishTimer) }
        establishTimer = nil
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
        precondition(!isOutputLent, "send(contentsOf:) from inside send(appending:) on the same connection")
        guard acceptsSends, !bytes.isEmpty else { return }
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
        var buffer = lendOutput()
        buffer.append(contentsOf: remaining)
        returnOutput(consume buffer)
        // Replies sent while a read is delivered are written, and the budget told what is
        // left, by the flush that ends the read.
        guard !isDeliveringInput else { return }
        reportToBudget()
        updateInterest()
    }

    /// Queues the bytes `write` appends to the buffer it is given — the connection's own
    /// pending output (behind bytes already written, perhaps), so a reply encoded there is
    /// never copied — as `send(_:)` does: written at once when nothing else is pending (after
    /// the read, when called from `onRead`), the connection closed with
    /// `.outputLimitExceeded` when the pending output passes `maxOutputBuffer`. `write` must
    /// only append; it runs in any case, and what it appends is dropped if the connection is
    /// closed, before or while it runs (an output budget may cut it then), or
    /// `closeAfterFlushing()` was called before. It must not send on this connection nor call
    /// `closeAfterFlushing()` (both trap): its pending output is lent out.
    public func send(appending write: (inout [UInt8]) -> Void) {
        precondition(!isOutputLent, "send(appending:) from inside send(appending:) on the same connection")
        let wasPending = pendingOutputCount > 0
        var buffer = lendOutput()
        let earlierCount = buffer.count
        write(&buffer)
        precondition(buffer.count >= earlierCount, "send(appending:) removed pending output")
        // `write` may have run code that closed the connection (an output budget cuts the
        // connection furthest behind): the output is dropped with it.
        guard isOpen else {
            returnOutput([])
            return
        }
        if !acceptsSends { buffer.removeSubrange(earlierCount...) }
        returnOutput(consume buffer)
        guard pendingOutputCount <= limits.maxOutputBuffer else {
            close(reason: .outputLimitExceeded)
            return
        }
        guard pendingOutputCount > 0, !isDeliveringInput else { return }
        if wasPending {
            // Waiting for writability already: the socket is full.
            reportToBudget()
            updateInterest()
        } else {
            flush()
        }
    }

    /// Whether `send` still queues output.
    private var acceptsSends: Bool {
        switch state {
        case .open, .draining(_, acceptsSends: true): true
        case .draining(_, acceptsSends: false), .closed: false
        }
    }

    /// Moves the output buffer out of `outputCell`, to be written or appended to and put back
    /// with `returnOutput(_:)` before anything else reads it.
    private func lendOutput() -> [UInt8] {
        isOutputLent = true
        return outputCell.move()
    }

    /// Callers pass `consume buffer`: passed plainly, their copy lived to the end of their
    /// scope, so the flush that followed found the storage shared and emptying it for the next
    /// reply allocated new storage — a `malloc` and a `free` for every reply.
    private func returnOutput(_ buffer: consuming [UInt8]) {
        outputCell.initialize(to: buffer)
        isOutputLent = false
    }

    /// Writes pending output until the socket is full; returns false if the connection closed.
    @discardableResult
    private func flush() -> Bool {
        var buffer = lendOutput()
        var start = outputStart
        let pendingAtStart = buffer.count - start
        var failure: Errno?
        while start < buffer.count {
            let sent: Int
            do {
                sent = try buffer.withUnsafeBytes { raw in
                    Result { () throws(Errno) in
                        try descriptor.send(UnsafeRawBufferPointer(rebasing: raw[start...]))
                    }
                }.get()
            } catch .wouldBlock {
                break
            } catch {
                failure = error
                break
            }
            let requested = buffer.count - start
            start += sent
            if sent < requested { break }  // the socket buffer is full: wait for writability
        }
        if start == buffer.count {
            // Keep a small buffer for the next replies; give a large one back. The bytes written
            // stay in a kept buffer, before `outputStart`, while it has room behind them for as
            // much again as this flush wrote: replies much like the last are appended there
            // without growing it, and emptying it (`removeAll(keepingCapacity:)`, ≈ 90
            // instructions) is needed every few replies rather than after each. A buffer kept
            // the first time is given `keptOutputMinimum` for that, once.
            if buffer.capacity > Self.keptOutputCapacity {
                buffer = []
                start = 0
            } else if buffer.capacity < Self.keptOutputMinimum, pendingAtStart > 0 {
                buffer = []
                buffer.reserveCapacity(Self.keptOutputMinimum)
                start = 0
            } else if buffer.capacity - buffer.count < pendingAtStart {
                buffer.removeAll(keepingCapacity: true)
                start = 0
            }
        } else if start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        returnOutput(consume buffer)
        outputStart = start
        if let failure {
            close(reason: .failed(failure))
            return false
        }
        reportToBudget()
        if pendingOutputCount == 0, case .draining(let reason, _) = state {
            close(reason: reason)
            return false
        }
        updateInterest()
        return isOpen
    }

    /// The largest output buffer kept, emptied, for the next replies once everything is written.
    static var keptOutputCapacity: Int { 4096 }
    /// The capacity a kept output buffer is given at least: room for several replies of a few
    /// hundred bytes (a `Decide`'s) before it is emptied.
    static var keptOutputMinimum: Int { 2048 }

    /// The output buffer's capacity (tests check that it is kept and given back).
    var outputCapacity: Int { outputCell.pointee.capacity }

    /// Where the output buffer's storage lies (tests check that a kept buffer is reused, not
    /// reallocated for each reply); nil while it has none.
    var outputStorage: UnsafeRawPointer? { outputCell.pointee.withUnsafeBytes { $0.baseAddress } }

    // MARK: closing

    /// Closes at once, dropping pending output; `onClose(.closedLocally)` follows.
    public func close() {
        close(reason: .closedLocally)
    }

    /// Stops reading and closes once pending output has been delivered (at once if none is
    /// pending), e.g. after sending a final error reply; later `send`s are ignored.
    public func closeAfterFlushing() {
        precondition(!isOutputLent, "closeAfterFlushing() from inside send(appending:) on the same connection")
        guard state == .open || state == .draining(reason: .peerClosed, acceptsSends: true) else { return }
        drain(reason: .closedLocally, acceptsSends: false)
    }

    /// Stops reading; closes now if nothing is pending, else once it is delivered.
    private func drain(reason: CloseReason, acceptsSends: Bool) {
        state = .draining(reason: reason, acceptsSends: acceptsSends)
        input = []
        inputSender = nil
        incompleteSince = nil
        if pendingOutputCount == 0, !isDeliveringInput {
            close(reason: reason)
        } else if !isDeliveringInput {
            updateInterest()
        }
    }

    /// Closes with `reason` (used by the output budget).
    func close(reason: CloseReason) {
        guard isOpen else { return }
        state = .closed
        if let registration { loop.unregister(registration) }
        registration = nil
        try? descriptor.close()
        if let incompleteTimer { loop.cancel(incompleteTimer) }
        incompleteTimer = nil
        if let establishTimer { loop.cancel(establishTimer) }
        establishTimer = nil
        input = []
        inputSender = nil
        // A buffer lent out (an output budget closes a connection from inside
        // `send(appending:)`'s `write`) is dropped when it comes back.
        if !isOutputLent { outputCell.pointee = [] }
        outputStart = 0
        reportToBudget()
        let handler = closeHandler
        // Drop the owner's closures: they usually capture the owner, which holds this object.
        closeHandler = { _ in }
        replaceReadHandler(with: ReadHandler { $0.bytes.count })
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
        } else if case .draining(let reason, _) = state, !readiness.isDisjoint(with: [.hangup, .error]),
                  pendingOutputCount == 0 {
            close(reason: reason)
        }
    }

    private func readAvailable() {
        let buffer = loop.readBuffer
        var reads = 0
        isDeliveringInput = true
        while isReading, reads < limits.maxReadsPerWakeUp {
            reads += 1
            let count: Int
            var sender: SenderCredentials?
            do {
                if receivesSenderCredentials {
                    let received = try Syscall.receiveWithSender(descriptor.rawValue, buffer)
                    count = received.count
                    let receipt = loop.readsReceived + 1
                    loop.readsReceived = receipt
                    sender = Self.credentials(of: received.sender, receipt: receipt)
                } else {
                    count = try descriptor.read(into: buffer)
                }
            } catch .wouldBlock {
                break
            } catch {
                endDelivery()
                close(reason: .failed(error))
                return
            }
            if count == 0 {
                // End of file: deliver what was asked for, then close.
                endDelivery()
                drain(reason: .peerClosed, acceptsSends: true)
                if isOpen { flush() }
                return
            }
            deliver(UnsafeRawBufferPointer(rebasing: buffer[..<count]), from: consume sender)
            if count < buffer.count { break }  // a short read drained the socket
        }
        endDelivery()
        guard isOpen else { return }
        if case .draining(let reason, _) = state, pendingOutputCount == 0 {
            close(reason: reason)
        } else if pendingOutputCount > 0 {
            flush()
        } else {
            updateInterest()
        }
    }

    /// The sender the kernel reported for one read; nil when it did not say (pid 0).
    private static func credentials(of sender: clinux_sender, receipt: UInt64) -> SenderCredentials? {
        let process = sender.pidfd >= 0
            ? ProcessHandle(adopting: FileDescriptor(rawValue: sender.pidfd), pid: sender.pid) : nil
        guard sender.has_credentials != 0, sender.pid > 0 else { return nil }
        return SenderCredentials(pid: sender.pid, uid: sender.uid, gid: sender.gid, process: process, receipt: receipt)
    }

    /// Inlined into `readAvailable`, its one caller: one call frame fewer a read. The sender
    /// is consumed into the input handed over, not copied there (a copy and a destroy of the
    /// credentials a read, ≈ 30 instructions).
    @inline(__always)
    private func deliver(_ chunk: UnsafeRawBufferPointer, from sender: consuming SenderCredentials?) {
        if input.isEmpty {
            // The common case: no incomplete message is pending, so hand over the loop's
            // buffer directly and copy only what the owner leaves.
            let received = ReceivedInput(bytes: chunk, newBytesStart: 0, sender: consume sender)
            let consumed = Unmanaged.passUnretained(readHandler)._withUnsafeGuaranteedRef { $0.call(received) }
            precondition((0...chunk.count).contains(consumed), "onRead consumed \(consumed) of \(chunk.count) bytes")
            guard isReading else { return }
            guard consumed < chunk.count else {
                // The common case: nothing kept, so nobody to note as its sender (an empty
                // input has none).
                incompleteSince = nil
                return
            }
            input = Array(chunk[consumed...])
            keepIncompleteInput(consumed: consumed, earlierCount: 0, sender: received.sender)
        } else {
            // Move the buffer out while the owner reads it, so a close() from inside onRead
            // does not touch an array that is being read.
            var pending = input
            input = []
            let earlierCount = pending.count
            pending.append(contentsOf: chunk)
            let earlierSender = inputHasSeveralSenders ? nil : inputSender
            let latestSender = consume sender
            let consumed = pending.withUnsafeBytes { bytes in
                Unmanaged.passUnretained(readHandler)._withUnsafeGuaranteedRef {
                    $0.call(ReceivedInput(bytes: bytes, newBytesStart: earlierCount, earlierSender: earlierSender, sender: latestSender))
                }
            }
            precondition((0...pending.count).contains(consumed), "onRead consumed \(consumed) of \(pending.count) bytes")
            guard isReading else { return }
            if consumed < pending.count {
                pending.removeFirst(consumed)
                input = pending
            }
            keepIncompleteInput(consumed: consumed, earlierCount: earlierCount, sender: latestSender)
        }
    }

    /// After a delivery that consumed `consumed` bytes of the input (of which `earlierCount`
    /// were left from earlier reads), the latest from `sender`: notes who wrote what is left
    /// in `input` and times the incomplete message it holds, if any.
    private func keepIncompleteInput(consumed: Int, earlierCount: Int, sender: SenderCredentials?) {
        noteSender(sender, leftoverIncludesEarlierBytes: consumed < earlierCount)
        guard !input.isEmpty else {
            incompleteSince = nil
            return
        }
        guard input.count <= limits.maxInputBuffer else {
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

    /// Tracks who wrote the bytes left in `input` after a read from `sender`.
    private func noteSender(_ sender: SenderCredentials?, leftoverIncludesEarlierBytes: Bool) {
        guard !input.isEmpty else {
            inputSender = nil
            inputHasSeveralSenders = false
            return
        }
        if leftoverIncludesEarlierBytes {
            let same = switch (inputSender, sender) {
            case (let earlier?, let latest?): earlier.isSameSender(as: latest)
            default: false
            }
            if !same { inputHasSeveralSenders = true }
        } else {
            inputHasSeveralSenders = false
        }
        inputSender = sender
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

    /// Inlined: after a reply, mostly two loads and a comparison (called, a call frame on
    /// every flush).
    @inline(__always)
    private func reportToBudget() {
        let pending = pendingOutputCount
        guard let budget, pending != reportedToBudget else { return }
        reportedToBudget = pending
        budget.update(self, pendingOutput: pending)
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
