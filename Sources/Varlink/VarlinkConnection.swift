public import LinuxIO

/// What the owner of a connection must do after feeding it bytes: write `bytes` (if any),
/// then close the connection if `close` is set.
public struct VarlinkConnectionOutput: Sendable, Hashable {
    public var bytes: [UInt8] = []
    public var close: VarlinkCloseReason?

    public init(bytes: [UInt8] = [], close: VarlinkCloseReason? = nil) {
        self.bytes = bytes
        self.close = close
    }

    public var isEmpty: Bool { bytes.isEmpty && close == nil }
}

/// Why the protocol wants a connection closed.
public enum VarlinkCloseReason: Sendable, Hashable, CustomStringConvertible {
    /// The client sent something that is not a Varlink call; it cannot be resynchronised.
    case invalidInput(VarlinkFrameError)
    /// The client sent more than `limit` bytes of further calls while one call was still open.
    case tooMuchPendingInput(limit: Int)

    public var description: String {
        switch self {
        case .invalidInput(let error): "invalid input: \(error)"
        case .tooMuchPendingInput(let limit): "more than \(limit) bytes of calls queued behind an open call"
        }
    }
}

/// The protocol side of one server connection, free of sockets: feed it received bytes, and
/// it returns what to write and whether to close.
///
/// Calls are answered in order, as Varlink requires: while a call is still open (its handler
/// kept the reply handle, for example a `more` stream), later calls wait in the buffer, at
/// most `maxMessageBytes` of them. Replies given outside `receive` (a stream's next event,
/// or calls released when an open call ends) go to `onLaterOutput`.
/// Use it from one thread (the event loop's); it is a class because reply handles kept by
/// handlers write to it after `receive` has returned.
public final class VarlinkConnection<Context> {
    public let service: VarlinkService<Context>
    /// Receives output produced outside `receive`. Set it before the first stream can reply.
    public var onLaterOutput: ((VarlinkConnectionOutput) -> Void)?

    /// The largest message accepted, NUL excluded (the decoder's bound).
    private let maxMessageBytes: Int
    /// Changed only through `withDecoder(_:)` (see `output`).
    private var decoder: VarlinkFrameDecoder
    /// Who wrote the bytes given to the decoder and not yet returned as calls: each entry
    /// covers the stream up to `end` (offsets as in `lastFrameStreamRange`).
    private var senders: [(end: Int, sender: SenderCredentials?)] = []
    /// Bytes given to the decoder, in all: the offsets of `senders` and of the decoder's
    /// `lastFrameStreamRange` (a call answered alone passes through neither).
    private var decodedByteCount = 0
    private static var maxSenderSegments: Int { 64 }
    /// The replies gathered while calls are processed the general way: the caller's buffer,
    /// moved in for the time of `receive(_:from:appendingRepliesTo:)`, so that reply handles
    /// can write to it. Empty otherwise. Like `StreamConnection`'s output, only loads, stores and `swap` touch
    /// the property (`writeOutput(_:)`), so it needs no run-time exclusivity check.
    private var output: [UInt8] = []
    /// Why the protocol wants the connection closed, once it does.
    private(set) var closeReason: VarlinkCloseReason? {
        didSet { wantsClose = closeReason != nil }
    }
    /// `closeReason != nil`, which the calls' path tests: testing the optional itself copies it.
    private var wantsClose = false
    private var openCall: VarlinkReplyHandle?
    /// While calls are being processed, output is collected; afterwards it is handed over at
    /// once (returned from `receive`, or given to `onLaterOutput`).
    private var isProcessing = false
    private var isClosed = false
    /// Whether calls of the service's direct methods are answered from their bytes
    /// (`VarlinkDirectMethod`); off, every call goes the general way (tests compare the two).
    package var answersDirectly: Bool {
        get { answersDirectlyStorage }
        set { answersDirectlyStorage = newValue }
    }
    /// Private storage, so that reading it needs no run-time exclusivity check.
    private var answersDirectlyStorage = true
    /// The service's direct methods bound to `context`, made at the first call and again when
    /// the service's change (`VarlinkBoundDirectMethod`, nil: none), and the service's
    /// `directMethodsGeneration` they were bound at (nil: not bound yet). Two properties, not an
    /// optional tuple, which each call would copy.
    private var boundDirectMethods: VarlinkBoundDirectMethod?
    private var boundGeneration: Int?
    /// The value handed to every handler on this connection (peer credentials, session, …).
    /// The last stored property: its size depends on `Context`, so every property after it
    /// would sit at an offset read from the class's metadata at run time, on each call.
    public var context: Context {
        didSet { boundGeneration = nil }  // bound to the one replaced
    }

    public init(service: VarlinkService<Context>, context: Context, maxMessageBytes: Int = 1 << 20) {
        self.service = service
        self.maxMessageBytes = maxMessageBytes
        self.context = context
        self.decoder = VarlinkFrameDecoder(maxMessageBytes: maxMessageBytes)
    }

    /// Takes bytes read from the client; returns the replies to write and whether to close.
    /// `sender`, when known, is who wrote these bytes; each call decoded then carries the
    /// sender of all its bytes, or nil if they came from more than one (`VarlinkCall.sender`).
    public func receive(_ bytes: some Collection<UInt8>, from sender: SenderCredentials? = nil) -> VarlinkConnectionOutput {
        let output = bytes.withContiguousStorageIfAvailable { receive(UnsafeRawBufferPointer($0), from: sender) }
        return output ?? Array(bytes).withUnsafeBytes { receive($0, from: sender) }
    }

    /// Takes bytes read from the client, as `receive(_:from:)` does.
    public func receive(_ bytes: UnsafeRawBufferPointer, from sender: SenderCredentials? = nil) -> VarlinkConnectionOutput {
        guard !isClosed else { return VarlinkConnectionOutput() }
        var replies: [UInt8] = []
        let closes = receive(bytes, from: sender, appendingRepliesTo: &replies)
        return VarlinkConnectionOutput(bytes: replies, close: closes ? closeReason : nil)
    }

    /// Takes bytes read from the client and appends the replies to `replies` (it only
    /// appends: a connection's pending output can be passed as it is); returns whether the
    /// protocol wants the connection closed, after writing `replies` (`closeReason` says why).
    /// `sender` as for `receive(_:from:)`.
    func receive(_ bytes: UnsafeRawBufferPointer, from sender: SenderCredentials?,
                 appendingRepliesTo replies: inout [UInt8]) -> Bool {
        guard !isClosed else { return false }
        isProcessing = true
        if !answerAlone(bytes, from: sender, into: &replies) {
            swap(&replies, &output)
            decode(bytes, from: sender)
            swap(&replies, &output)
        }
        isProcessing = false
        guard wantsClose else { return false }
        closed()
        return true
    }

    /// Hands `bytes` to the decoder, noting their sender, and processes the calls completed.
    private func decode(_ bytes: UnsafeRawBufferPointer, from sender: SenderCredentials?) {
        decodedByteCount += bytes.count
        var segments: [(end: Int, sender: SenderCredentials?)] = []
        swap(&segments, &senders)
        if let last = segments.last, Self.same(last.sender, sender) || (last.sender == nil && sender == nil) {
            segments[segments.count - 1].end = decodedByteCount
        } else if segments.count >= Self.maxSenderSegments {
            // Calls queued behind an open call, from ever-changing senders: rather than keep a
            // pidfd per read, forget who sent them (their calls are then of unknown sender).
            segments = [(decodedByteCount, nil)]
        } else {
            segments.append((decodedByteCount, sender))
        }
        swap(&segments, &senders)
        withDecoder { $0.append(bytes) }
        processCalls()
    }

    /// Runs `change` on the decoder moved to a local meanwhile (see `output`).
    private func withDecoder<Result, Failure>(
        _ change: (inout VarlinkFrameDecoder) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        var local = VarlinkFrameDecoder(maxMessageBytes: maxMessageBytes)
        swap(&local, &decoder)
        defer { swap(&local, &decoder) }
        return try change(&local)
    }

    /// Runs `write` on the gathered replies, moved to a local meanwhile: no exclusive access
    /// to the property spans `write`, which runs handlers. Replies cannot be delivered to this
    /// connection from inside it (no other call of the connection is open while one runs), but
    /// should one be, it lands in the emptied property and is kept, after.
    private func writeOutput<Result>(_ write: (inout [UInt8]) -> Result) -> Result {
        var bytes: [UInt8] = []
        swap(&bytes, &output)
        let result = write(&bytes)
        swap(&bytes, &output)
        if !bytes.isEmpty { appendOutput(bytes) }
        return result
    }

    private func appendOutput(_ bytes: [UInt8]) {
        var all: [UInt8] = []
        swap(&all, &output)
        all.append(contentsOf: bytes)
        swap(&all, &output)
    }

    /// The peer hung up or the owner closed the connection: open calls are cancelled (their
    /// `onCancel` runs) and later replies are dropped.
    public func closed() {
        guard !isClosed else { return }
        isClosed = true
        let call = openCall
        openCall = nil
        call?.cancel()
    }

    /// Answers the call in `frame` if it is a plain call of one of the service's direct
    /// methods (`VarlinkBoundDirectMethod.answer(_:sender:into:)`), binding them to `context`
    /// first if they are not yet. They are not retained for the call: only this method
    /// replaces them, and not while a call is answered (no other call of the connection is
    /// processed meanwhile, `isProcessing`), so the connection's reference keeps them alive.
    private func answerDirectly(_ frame: UnsafeRawBufferPointer, sender: SenderCredentials?,
                                into out: inout [UInt8]) -> Bool {
        let generation = service.directMethodsGeneration
        if boundGeneration != generation {
            boundDirectMethods = service.directMethods(boundTo: context)
            boundGeneration = generation
        }
        guard let first = boundDirectMethods.map(Unmanaged.passUnretained) else { return false }
        return first._withUnsafeGuaranteedRef { $0.answer(frame, sender: sender, into: &out) }
    }

    /// Answers the most common read without the decoder: one whole call of a direct method
    /// in its plain form (the read's only NUL is its last byte), with nothing buffered, open
    /// or pending. It is what `processCalls` would do with it, less the copy into the decoder
    /// and the sender bookkeeping; false when it did nothing and the read goes that way.
    /// The reply goes straight to `replies`, not through `output`.
    ///
    /// The bytes before the last are not searched for another NUL: the read is offered whole
    /// as one frame, and a frame that holds a NUL is no plain call — its envelope is compared
    /// byte for byte, and its parameters are refused by the method's reader, which takes only
    /// JSON (`VarlinkDirectMethod`), where a NUL cannot stand. So a read of several calls goes
    /// the general way, as before; not searching saved a `memchr` over every call. Inlined
    /// into `receive`, its one caller: one call frame fewer a call.
    @inline(__always)
    private func answerAlone(_ bytes: UnsafeRawBufferPointer, from sender: SenderCredentials?,
                             into replies: inout [UInt8]) -> Bool {
        guard answersDirectlyStorage, openCall == nil, !wantsClose, senders.isEmpty,
              decoder.bufferedByteCount == 0, bytes.count > 1, bytes.count - 1 <= maxMessageBytes,
              bytes[bytes.count - 1] == 0 else { return false }
        let frame = UnsafeRawBufferPointer(rebasing: bytes[..<(bytes.count - 1)])
        guard answerDirectly(frame, sender: sender, into: &replies) else { return false }
        // No reply of another call can be delivered meanwhile (none is open), but should one
        // be, it is in `output`: keep it, after.
        if !output.isEmpty {
            var delivered: [UInt8] = []
            swap(&delivered, &output)
            replies.append(contentsOf: delivered)
        }
        return true
    }

    private func processCalls() {
        while openCall == nil, !isClosed, !wantsClose {
            var call: VarlinkCall
            do {
                guard let frame = try withDecoder({ decoder throws(VarlinkFrameError) in try decoder.nextFrame() })
                else { return }
                let sender = takeSender(of: decoder.lastFrameStreamRange)
                if answersDirectlyStorage {
                    let answered = frame.withUnsafeBytes { call in
                        writeOutput { answerDirectly(call, sender: sender, into: &$0) }
                    }
                    if answered { continue }
                }
                let message = try withDecoder { decoder throws(VarlinkFrameError) in try decoder.message(in: frame) }
                call = try VarlinkCall(message: message)
                call.sender = sender
            } catch {
                fail(error)
                return
            }
            let handle = VarlinkReplyHandle(call: call, sink: self)
            if !call.oneway { openCall = handle }
            service.dispatch(call, context: context, reply: handle)
        }
        if openCall != nil, decoder.bufferedByteCount > maxMessageBytes {
            closeReason = .tooMuchPendingInput(limit: maxMessageBytes)
        }
    }

    /// The one sender of the stream's bytes in `range` (nil if unknown or several), and
    /// forgets the senders of bytes up to its end.
    private func takeSender(of range: Range<Int>) -> SenderCredentials? {
        var owner: SenderCredentials?
        var seenAny = false
        var isSingle = true
        var segmentStart = 0
        for segment in senders {
            defer { segmentStart = segment.end }
            guard segment.end > range.lowerBound, segmentStart < range.upperBound else { continue }
            if !seenAny {
                owner = segment.sender
                seenAny = true
            } else if !Self.same(owner, segment.sender) {
                isSingle = false
            }
        }
        var segments: [(end: Int, sender: SenderCredentials?)] = []
        swap(&segments, &senders)
        segments.removeAll { $0.end <= range.upperBound }
        swap(&segments, &senders)
        return isSingle ? owner : nil
    }

    private static func same(_ a: SenderCredentials?, _ b: SenderCredentials?) -> Bool {
        guard let a, let b else { return false }
        return a.isSameSender(as: b)
    }

    private func fail(_ error: VarlinkFrameError) {
        // A JSON object with a bad member is a call we can answer; anything else is not.
        switch error {
        case .missingMethod: writeOutput { VarlinkReply(error: .invalidParameter("method")).encode(to: &$0) }
        case .invalidField(let name, _, _), .duplicateMember(let name, _):
            writeOutput { VarlinkReply(error: .invalidParameter(name)).encode(to: &$0) }
        default: break
        }
        closeReason = .invalidInput(error)
    }

    /// Hands over the replies gathered outside `receive` (and the close, if the protocol wants
    /// one) to `onLaterOutput`.
    private func deliverLaterOutput() {
        var bytes: [UInt8] = []
        swap(&bytes, &output)
        let close = closeReason
        if close != nil { closed() }
        let later = VarlinkConnectionOutput(bytes: bytes, close: close)
        if !later.isEmpty { onLaterOutput?(later) }
    }
}

extension VarlinkConnection: VarlinkReplySink {
    func deliver(continues: Bool, from handle: VarlinkReplyHandle, encode: (inout [UInt8]) -> Void) {
        guard !isClosed else { return }
        if !handle.isOneway { writeOutput(encode) }
        let endsOpenCall = handle === openCall && !continues
        if endsOpenCall { openCall = nil }
        guard !isProcessing else { return }
        if endsOpenCall {
            isProcessing = true
            processCalls()
            isProcessing = false
        }
        deliverLaterOutput()
    }
}
