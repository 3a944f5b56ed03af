public import JSONCore

/// Where a reply handle delivers its replies: the connection the call arrived on.
protocol VarlinkReplySink: AnyObject {
    /// Appends a reply to `handle`'s call, which `encode` writes as one NUL-terminated message
    /// (not called for a `oneway` call); `continues` says whether more replies follow.
    func deliver(continues: Bool, from handle: VarlinkReplyHandle, encode: (inout [UInt8]) -> Void)
}

/// The one way to answer a call. A handler may answer at once or keep the handle and answer
/// later from the same thread (the connection's event loop).
///
/// Guarantees: exactly one final reply per call (`reply` or `fail`; a second one is a
/// programmer error and traps); `send` (a reply with `continues: true`) only for calls made
/// with `more`; nothing at all reaches the client for a `oneway` call; after the connection
/// has closed, replies are dropped and `isConnected` is false.
public final class VarlinkReplyHandle {
    /// The fully qualified method that was called.
    public let method: String
    /// The call was made with `more`: `send` may be used before the final reply.
    public let wantsMore: Bool
    /// The call was made with `oneway`: replies are discarded.
    public let isOneway: Bool
    /// The final reply (or error) has been given.
    public private(set) var isFinished = false
    /// Called once if the connection closes before the final reply, so a stream can stop.
    public var onCancel: (() -> Void)?

    weak var sink: (any VarlinkReplySink)?

    init(call: VarlinkCall, sink: any VarlinkReplySink) {
        self.method = call.method
        self.wantsMore = call.more
        self.isOneway = call.oneway
        self.sink = sink
    }

    /// Whether replies still reach the client's connection.
    public var isConnected: Bool { sink != nil }

    /// Sends one reply with `continues: true`; more replies follow. The call must have `more`.
    public func send(_ parameters: [String: JSONValue]) {
        precondition(wantsMore, "\(method): a continuing reply needs a call made with 'more'")
        precondition(!isFinished, "\(method): reply after the final reply")
        sink?.deliver(continues: true, from: self) { VarlinkReply(parameters: parameters, continues: true).encode(to: &$0) }
    }

    /// Sends a continuing reply encoded beforehand: one update sent on many calls is encoded
    /// once. The call must have `more`.
    public func send(_ reply: VarlinkEncodedReply) {
        precondition(wantsMore, "\(method): a continuing reply needs a call made with 'more'")
        precondition(!isFinished, "\(method): reply after the final reply")
        sink?.deliver(continues: true, from: self) { $0.append(contentsOf: reply.bytes) }
    }

    /// Sends the final reply.
    public func reply(_ parameters: [String: JSONValue] = [:]) {
        finish(VarlinkReply(parameters: parameters))
    }

    /// Ends the call with an error.
    public func fail(_ error: VarlinkError) {
        finish(VarlinkReply(error: error))
    }

    private func finish(_ reply: VarlinkReply) {
        precondition(!isFinished, "\(method): a second final reply")
        isFinished = true
        onCancel = nil
        sink?.deliver(continues: false, from: self) { reply.encode(to: &$0) }
    }

    /// The connection closed before the final reply.
    func cancel() {
        sink = nil
        guard !isFinished else { return }
        let onCancel = onCancel
        self.onCancel = nil
        onCancel?()
    }
}
