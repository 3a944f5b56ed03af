import JSONCore
public import LinuxIO

/// A method a service answers straight from the bytes of its call: its parameters read by
/// the handler's own reader into its own request type, its reply written from its own reply
/// type — no `[String: JSONValue]` tree, no `VarlinkCall`, no reply handle in between. For
/// the one hot call of a service (proctord's `Decide`), where building and reading those
/// costs more than answering.
///
/// Only a call in its plain form is answered so: exactly `{"method":"M","parameters":{…}}`,
/// byte for byte up to the parameters (no white space, no escape, the method first, nothing
/// else in the envelope: no `oneway`, `more` or `upgrade`), and parameters that `read`
/// takes. `read` returns nil for anything it is not sure of — a member it does not know or
/// has seen already, a null, a value of another type, a value the method's request would
/// refuse, a form it does not read (white space, an escape). Any such call goes the general
/// way (`VarlinkService.dispatch`) from its first byte, which gives it its error reply: the
/// direct way has no error replies of its own but the handler's, so a call gets the same
/// reply whichever way it went (`DirectMethodTests` compares the two).
public struct VarlinkDirectMethod<Context> {
    /// Binds the method to one connection's context and to its interface's admission: the
    /// answer that connection's calls run (`VarlinkBoundDirectMethod`). It answers the call
    /// whose parameters it is given into `out` and returns true; or returns false, having run
    /// nothing and written nothing.
    @usableFromInline let bind: (_ context: Context, _ admission: VarlinkService<Context>.Admission?)
        -> (_ parameters: UnsafeRawBufferPointer, _ sender: SenderCredentials?, _ out: inout [UInt8]) -> Bool

    /// - Parameters:
    ///   - read: reads the parameters: the call's bytes after `"parameters":` up to the
    ///     envelope's closing `}`, which must be exactly one object it takes; or returns nil
    ///     when the general path must answer. It must accept only what the interface and the
    ///     general handler's request accept, and read it to the same values. The request may
    ///     point into those bytes: they stay valid until `answer` returns. Taking only JSON, it
    ///     refuses bytes that hold a NUL: a read of several calls is offered to it whole, as
    ///     one call's parameters that run on into the next calls
    ///     (`VarlinkConnection.answerAlone`), and only its refusal sends them the general way.
    ///     It is given the connection's context too, to read by what it knows of the caller
    ///     (proctord: the id of the session the caller named last); it must not change it.
    ///   - answer: the handler, as the general path's handler for the method: who sent the
    ///     call (`VarlinkCall.sender`), the connection's context. A thrown error is the
    ///     call's error reply.
    ///
    /// Inlinable so that the service's module specializes the answer for its request, reply
    /// and context types: generic at run time, it read their metadata on every call. The
    /// bound answer is one closure that holds the context: a call runs no other closure of
    /// this module to reach `read` and `answer`.
    @inlinable
    public init<Request, Reply: VarlinkDirectReply>(
        read: @escaping (UnsafeRawBufferPointer, Context) -> Request?,
        answer: @escaping (Request, SenderCredentials?, Context) throws(VarlinkError) -> Reply)
    {
        bind = { context, admission in
            { parameters, sender, out in
                guard let request = read(parameters, context) else { return false }
                // As `VarlinkService.dispatch` runs them once the call is known to be well formed:
                // the interface's admission first, then the handler.
                do throws(VarlinkError) {
                    try admission?(context)
                    let reply = try answer(request, sender, context)
                    reply.writeReply(to: &out)
                } catch {
                    VarlinkReply(error: error).encode(to: &out)
                }
                return true
            }
        }
    }
}

extension VarlinkDirectMethod {
    /// A direct method whose reader needs nothing of the connection, as
    /// `init(read:answer:)` describes.
    @inlinable
    public init<Request, Reply: VarlinkDirectReply>(
        read: @escaping (UnsafeRawBufferPointer) -> Request?,
        answer: @escaping (Request, SenderCredentials?, Context) throws(VarlinkError) -> Reply)
    {
        self.init(read: { parameters, _ in read(parameters) }, answer: answer)
    }
}

/// A direct method bound to one connection's context (`VarlinkService.directMethods(boundTo:)`):
/// the start of its plain calls (`VarlinkPlainCall.prefix(of:)`) and its answer, the
/// interface's admission folded in, then the connection's next one. Its type names no generic
/// parameter, so picking and calling one reads no generic metadata at run time; and the
/// connection keeps it, so a call reads no property of the service (each a dynamic
/// exclusivity check). A list of objects whose members never change, not an array of
/// structs: the connection reaches the first without retaining it
/// (`VarlinkConnection.answerDirectly(_:sender:into:)`), and from there the compiler borrows
/// every member — read from an array's element, the prefix and the closure were each
/// retained and released around the call, four atomic operations.
final class VarlinkBoundDirectMethod {
    let prefix: [UInt8]
    let handler: (_ parameters: UnsafeRawBufferPointer, _ sender: SenderCredentials?, _ out: inout [UInt8]) -> Bool
    /// The service's count of calls answered directly (`VarlinkService.directlyAnsweredCalls`),
    /// which outlives the connection that holds this.
    let answeredCalls: UnsafeMutablePointer<Int>
    let next: VarlinkBoundDirectMethod?

    init(prefix: [UInt8], handler: @escaping (UnsafeRawBufferPointer, SenderCredentials?, inout [UInt8]) -> Bool,
         answeredCalls: UnsafeMutablePointer<Int>, next: VarlinkBoundDirectMethod?) {
        self.prefix = prefix
        self.handler = handler
        self.answeredCalls = answeredCalls
        self.next = next
    }

    /// Answers the call in `frame` (one message, without its NUL) if it is a call of this
    /// method or of one after it in its plain form, appending the reply to `out`; false
    /// otherwise, when nothing was run or written and the caller dispatches the call the
    /// general way. Not a method of the generic service: here nothing reads generic metadata.
    func answer(_ frame: UnsafeRawBufferPointer, sender: SenderCredentials?, into out: inout [UInt8]) -> Bool {
        guard let parameters = VarlinkPlainCall.parameters(of: frame, prefix: prefix) else {
            return next?.answer(frame, sender: sender, into: &out) ?? false
        }
        guard handler(parameters, sender, &out) else { return false }
        answeredCalls.pointee += 1
        return true
    }
}

/// The envelope of a call in its plain form, `{"method":"M","parameters":{…}}`.
enum VarlinkPlainCall {
    /// The bytes of the envelope before the parameters of a call of `method` (fully qualified).
    static func prefix(of method: String) -> [UInt8] {
        Array(#"{"method":""#.utf8) + Array(method.utf8) + Array(#"","parameters":"#.utf8)
    }

    /// The parameters of `frame` (one message, without its NUL) if it is a plain call whose
    /// envelope begins with `prefix`: the bytes between that and the envelope's closing `}`.
    /// The prefix is compared as words in place (`JSONPlainObject.sameBytes`): a `memcmp` call
    /// cost more than the compare.
    static func parameters(of frame: UnsafeRawBufferPointer, prefix: [UInt8]) -> UnsafeRawBufferPointer? {
        guard frame.count > prefix.count + 1, frame[frame.count - 1] == UInt8(ascii: "}"),
              prefix.withUnsafeBufferPointer({ JSONPlainObject.sameBytes(frame.baseAddress!, $0.baseAddress!, count: $0.count) })
        else { return nil }
        return UnsafeRawBufferPointer(rebasing: frame[prefix.count..<(frame.count - 1)])
    }
}

/// A reply a `VarlinkDirectMethod` writes from its own type.
public protocol VarlinkDirectReply {
    /// Appends the reply's parameters as one JSON object, byte for byte as
    /// `JSONValue.object(parameters).write(to:)` writes them: members sorted by their UTF-8
    /// bytes, absent optionals left out, no white space.
    func writeParameters(to out: inout [UInt8])

    /// Appends the whole reply message: `{"parameters":`, the parameters as
    /// `writeParameters(to:)` writes them, `}` and the NUL that ends it — what
    /// `VarlinkReply.encode` makes of them. The default appends the envelope around
    /// `writeParameters(to:)`; a reply that writes its parameters in one copy can take the
    /// envelope into that copy.
    func writeReply(to out: inout [UInt8])
}

extension VarlinkDirectReply {
    public func writeReply(to out: inout [UInt8]) {
        VarlinkReply.encode(continues: false, error: nil, to: &out) { writeParameters(to: &$0) }
    }
}
