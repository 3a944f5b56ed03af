public import JSONCore
public import LinuxIO

/// A method a service answers straight from the bytes of its call: its parameters read by a
/// `JSONPullReader` into the handler's own request type, its reply written from the
/// handler's own reply type — no `[String: JSONValue]` tree, no `VarlinkCall`, no reply
/// handle in between. For the one hot call of a service (proctord's `Decide`), where
/// building and reading those costs more than answering.
///
/// Only a call in its plain form is answered so: `{"method": M, "parameters": {…}}`, the
/// method first and nothing else in the envelope (no `oneway`, `more` or `upgrade`), and
/// parameters that `read` takes. `read` returns nil for anything it is not sure of — a
/// member it does not know or has seen already, a null, a value of another type, a value
/// the method's request would refuse. Any such call, and any the reader finds malformed,
/// goes the general way (`VarlinkService.dispatch`) from its first byte, which gives it its
/// error reply: the direct way has no error replies of its own but the handler's, so a
/// call gets the same reply whichever way it went (`DirectMethodTests` compares the two).
public struct VarlinkDirectMethod<Context> {
    /// Answers the call whose envelope has been read up to its parameters' value into `out`
    /// and returns true; or returns false, having run nothing and written nothing.
    @usableFromInline let answer: (_ reader: inout JSONPullReader, _ sender: SenderCredentials?, _ context: Context,
                 _ admission: VarlinkService<Context>.Admission?, _ out: inout [UInt8]) -> Bool

    /// - Parameters:
    ///   - read: reads the parameters object (the reader is at its `{`), or returns nil when
    ///     the general path must answer. It must accept only what the interface and the
    ///     general handler's request accept, and read it to the same values.
    ///   - answer: the handler, as the general path's handler for the method: who sent the
    ///     call (`VarlinkCall.sender`), the connection's context. A thrown error is the
    ///     call's error reply.
    ///
    /// Inlinable so that the service's module specializes the answer for its request, reply
    /// and context types: generic at run time, it read their metadata on every call.
    @inlinable
    public init<Request, Reply: VarlinkDirectReply>(
        read: @escaping (inout JSONPullReader) throws(JSONParseError) -> Request?,
        answer: @escaping (Request, SenderCredentials?, Context) throws(VarlinkError) -> Reply)
    {
        self.answer = { reader, sender, context, admission, out in
            let request: Request
            do throws(JSONParseError) {
                // The envelope must end after the parameters: a flag after them is not the plain form.
                guard let parameters = try read(&reader), try reader.nextKey(among: []) == nil else { return false }
                try reader.end()
                request = parameters
            } catch {
                return false
            }
            // As `VarlinkService.dispatch` runs them once the call is known to be well formed:
            // the interface's admission first, then the handler.
            do throws(VarlinkError) {
                try admission?(context)
                let reply = try answer(request, sender, context)
                VarlinkReply.encode(continues: false, error: nil, to: &out) { reply.writeParameters(to: &$0) }
            } catch {
                VarlinkReply(error: error).encode(to: &out)
            }
            return true
        }
    }
}

/// A direct method's answer bound to one connection's context, its interface's admission
/// folded in (`VarlinkService.directMethods(boundTo:)`): its type names no generic
/// parameter, so picking and calling one reads no generic metadata at run time.
typealias VarlinkBoundDirectMethod = (_ reader: inout JSONPullReader, _ sender: SenderCredentials?,
                                      _ out: inout [UInt8]) -> Bool

/// The envelope of a call in its plain form, `{"method": "…", "parameters": {…}}`.
enum VarlinkPlainCall {
    private static let method = Array("method".utf8), parameters = Array("parameters".utf8)
    private static let members = [method, parameters]

    /// Reads a call's envelope up to its parameters' value: the index of its method in
    /// `names` (fully qualified names, as bytes) when the call starts `{"method": "…",
    /// "parameters":`, `names.count` for another method, nil for another start.
    static func method(_ reader: inout JSONPullReader, among names: [[UInt8]]) throws(JSONParseError) -> Int? {
        try reader.beginObject()
        guard try reader.nextKey(among: members) == 0, try reader.peek() == .string else { return nil }
        let method = try reader.string(among: names)
        guard try reader.nextKey(among: members) == 1 else { return nil }
        return method
    }
}

/// A reply a `VarlinkDirectMethod` writes from its own type.
public protocol VarlinkDirectReply {
    /// Appends the reply's parameters as one JSON object, byte for byte as
    /// `JSONValue.object(parameters).write(to:)` writes them: members sorted by their UTF-8
    /// bytes, absent optionals left out, no white space.
    func writeParameters(to out: inout [UInt8])
}
