public import Varlink

/// The handlers of one interface over its typed requests and replies, for
/// `VarlinkService.addInterface`: each call's parameters are read into the method's
/// `Request` before its handler runs, and a handler answers with the method's `Reply`.
public struct MethodTable<Context> {
    /// Who may call an interface is checked before its parameters, by the service
    /// (`VarlinkService.addInterface(_:methods:admission:)`), not here.
    public private(set) var methods: [String: VarlinkMethod<Context>] = [:]

    public init() {}

    /// A method answered with one reply.
    public mutating func answer<Method: ProtocolMethod>(
        _ method: Method.Type, _ handler: @escaping (Method.Request, Context) throws(VarlinkError) -> Method.Reply)
    {
        methods[Method.name] = VarlinkMethod { call, context, reply throws(VarlinkError) in
            reply.reply(try handler(try Method.request(call.parameters), context))
        }
    }

    /// A method answered with one reply whose handler needs the call itself: who sent it
    /// (`VarlinkCall.sender`), which may differ from who connected.
    public mutating func answer<Method: ProtocolMethod>(
        _ method: Method.Type,
        _ handler: @escaping (Method.Request, VarlinkCall, Context) throws(VarlinkError) -> Method.Reply)
    {
        methods[Method.name] = VarlinkMethod { call, context, reply throws(VarlinkError) in
            reply.reply(try handler(try Method.request(call.parameters), call, context))
        }
    }

    /// A method whose one reply may come later: the handler is given a function to call once
    /// with the outcome (the call stays open meanwhile; the connection's later calls wait
    /// behind it, other connections are served).
    public mutating func answerLater<Method: ProtocolMethod>(
        _ method: Method.Type,
        _ handler: @escaping (Method.Request, Context, @escaping (Result<Method.Reply, VarlinkError>) -> Void)
            throws(VarlinkError) -> Void)
    {
        methods[Method.name] = VarlinkMethod { call, context, reply throws(VarlinkError) in
            try handler(try Method.request(call.parameters), context) { outcome in
                switch outcome {
                case .success(let message): reply.reply(message)
                case .failure(let error): reply.fail(error)
                }
            }
        }
    }

    /// A method called with `more` whose handler keeps the handle and sends replies
    /// (`send(_:)`) as long as it likes.
    public mutating func stream<Method: ProtocolMethod>(
        _ method: Method.Type, _ handler: @escaping (Method.Request, Context, VarlinkReplyHandle) throws(VarlinkError) -> Void)
    {
        methods[Method.name] = VarlinkMethod(requiresMore: true) { call, context, reply throws(VarlinkError) in
            try handler(try Method.request(call.parameters), context, reply)
        }
    }

    /// A streaming method whose handler needs the call itself (who sent it).
    public mutating func stream<Method: ProtocolMethod>(
        _ method: Method.Type,
        _ handler: @escaping (Method.Request, VarlinkCall, Context, VarlinkReplyHandle) throws(VarlinkError) -> Void)
    {
        methods[Method.name] = VarlinkMethod(requiresMore: true) { call, context, reply throws(VarlinkError) in
            try handler(try Method.request(call.parameters), call, context, reply)
        }
    }
}

extension VarlinkReplyHandle {
    /// Sends the final reply.
    public func reply(_ message: some ProtocolMessage) { reply(message.fields) }
    /// Sends a reply with `continues: true` (a call made with `more`).
    public func send(_ message: some ProtocolMessage) { send(message.fields) }
}
