import JSONCore
import LinuxIO
import Testing
@testable import Varlink

/// `VarlinkDirectMethod`: which calls are answered from their bytes, and that every call gets
/// the same bytes back and the same close whichever way it went.
@Suite struct DirectMethodTests {
    private struct PingReply: VarlinkDirectReply {
        let text: String
        let peer: String
        func writeParameters(to out: inout [UInt8]) {
            out.append(contentsOf: #"{"peer":"#.utf8)
            JSONValue.writeString(peer, to: &out)
            out.append(contentsOf: #","text":"#.utf8)
            JSONValue.writeString(text, to: &out)
            out.append(UInt8(ascii: "}"))
        }
    }

    /// `Ping(text)` only, written plainly: `mode`, anything else and any other form go the general way.
    private static func readPing(_ parameters: UnsafeRawBufferPointer) -> String? {
        guard var object = JSONPlainObject(parameters), object.hasMember, let key = object.key(),
              JSONPlainObject.equal(key, "text"), let text = object.text(), !object.hasMember else { return nil }
        return text
    }

    /// The ping service, its `Ping` also answered directly (noted in the peer's log), and an
    /// admission that refuses a peer named "stranger".
    private static func service() throws -> VarlinkService<Peer> {
        let service = try makeService(admission: { peer throws(VarlinkError) in
            if peer.name == "stranger" { throw .permissionDenied }
        })
        service.addDirectMethod("org.example.ping.Ping", VarlinkDirectMethod(read: readPing) { text, _, peer in
            peer.log.append("direct")
            return PingReply(text: text, peer: peer.name)
        })
        return service
    }

    /// What a connection answers to `input`, the way given, and whether the direct way answered.
    private static func answer(_ input: String, directly: Bool, peer name: String = "app")
        throws -> (output: VarlinkConnectionOutput, direct: Bool)
    {
        let peer = Peer(name: name)
        let connection = VarlinkConnection(service: try service(), context: peer, maxMessageBytes: 256)
        connection.answersDirectly = directly
        let output = connection.receive(Array(input.utf8))
        return (output, peer.log.contains("direct"))
    }

    static let plainCalls = [
        #"{"method":"org.example.ping.Ping","parameters":{"text":"hi"}}"#,
        #"{"method":"org.example.ping.Ping","parameters":{"text":""}}"#,
        #"{"method":"org.example.ping.Ping","parameters":{"text":"ü€𝄞 /:,{}[]"}}"#,
    ]

    static let otherCalls = [
        // White space or an escape anywhere: not the plain form, though the same call.
        #" { "method" : "org.example.ping.Ping" , "parameters" : { "text" : "h\u00e9\"\n\/" } } "#,
        #"{"m\u0065thod":"org.example.ping.Ping","parameters":{"text":"ü€𝄞"}}"#,
        #"{"method":"org.example.ping.P\u0069ng","parameters":{"text":"hi"}}"#,
        #"{"method":"org.example.ping.Ping","parameters":{"t\u0065xt":"hi"}}"#,
        #"{"method":"org.example.ping.Ping","parameters":{"text":"h\"i"}}"#,
        #"{"method":"org.example.ping.Ping","parameters": {"text":"hi"}}"#,
        #"{"method":"org.example.ping.Ping","parameters":{"text":"hi"} }"#,
        #"{"method":"org.example.ping.Ping","parameters":{"text" :"hi"}}"#,
        // Flags, before or after the parameters, true or false.
        #"{"method":"org.example.ping.Ping","parameters":{"text":"hi"},"oneway":true}"#,
        #"{"method":"org.example.ping.Ping","parameters":{"text":"hi"},"more":true}"#,
        #"{"method":"org.example.ping.Ping","parameters":{"text":"hi"},"more":false}"#,
        #"{"method":"org.example.ping.Ping","parameters":{"text":"hi"},"upgrade":true}"#,
        #"{"method":"org.example.ping.Ping","oneway":true,"parameters":{"text":"hi"}}"#,
        #"{"method":"org.example.ping.Ping","parameters":{"text":"hi"},"oneway":"yes"}"#,
        // Another order, a repeated or unknown member of the envelope.
        #"{"parameters":{"text":"hi"},"method":"org.example.ping.Ping"}"#,
        #"{"method":"org.example.ping.Ping","parameters":{"text":"hi"},"method":"org.example.ping.Ping"}"#,
        #"{"method":"org.example.ping.Ping","parameters":{"text":"hi"},"extra":1}"#,
        // Parameters the direct reader does not take.
        #"{"method":"org.example.ping.Ping","parameters":{"text":"hi","text":"again"}}"#,
        #"{"method":"org.example.ping.Ping","parameters":{"text":"hi","mode":"loud"}}"#,
        #"{"method":"org.example.ping.Ping","parameters":{"text":"hi","other":[1,{"a":2}]}}"#,
        #"{"method":"org.example.ping.Ping","parameters":{"text":5}}"#,
        #"{"method":"org.example.ping.Ping","parameters":{"text":null}}"#,
        #"{"method":"org.example.ping.Ping","parameters":{}}"#,
        #"{"method":"org.example.ping.Ping","parameters":null}"#,
        #"{"method":"org.example.ping.Ping","parameters":[]}"#,
        #"{"method":"org.example.ping.Ping"}"#,
        // Not JSON, not UTF-8, not an object, not a call.
        #"{"method":"org.example.ping.Ping","parameters":{"text":"hi"}} x"#,
        #"{"method":"org.example.ping.Ping","parameters":{"text":"hi"}"#,
        #"{"method":"org.example.ping.Ping","parameters":{"text":"a\#u{1}b"}}"#,
        "\u{FEFF}" + #"{"method":"org.example.ping.Ping","parameters":{"text":"hi"}}"#,
        #"["org.example.ping.Ping"]"#,
        #"{"method":5,"parameters":{"text":"hi"}}"#,
        #"{"method":"org.example.ping.Nope","parameters":{"text":"hi"}}"#,
        #"{"method":"org.example.ping.Forget","parameters":{"note":"n"}}"#,
        // Too long for the connection (256 bytes).
        #"{"method":"org.example.ping.Ping","parameters":{"text":""# + String(repeating: "x", count: 300) + #""}}"#,
    ]

    @Test(arguments: plainCalls)
    func aPlainCallIsAnsweredDirectlyWithTheGeneralReply(_ call: String) throws {
        let general = try Self.answer(call + "\0", directly: false)
        let direct = try Self.answer(call + "\0", directly: true)
        #expect(direct.direct && !general.direct)
        #expect(direct.output == general.output)
        #expect(try replies(direct.output.bytes).first?.error == nil)
    }

    @Test(arguments: otherCalls)
    func anyOtherCallGoesTheGeneralWay(_ call: String) throws {
        let general = try Self.answer(call + "\0", directly: false)
        let direct = try Self.answer(call + "\0", directly: true)
        #expect(!direct.direct)
        #expect(direct.output == general.output)
    }

    @Test func invalidUTF8GoesTheGeneralWayAndClosesTheConnection() throws {
        var bytes = Array(#"{"method":"org.example.ping.Ping","parameters":{"text":"a"#.utf8)
        bytes += [0xC3, 0x28] + Array(#""}}"#.utf8) + [0]
        for directly in [false, true] {
            let connection = VarlinkConnection(service: try Self.service(), context: Peer(name: "app"))
            connection.answersDirectly = directly
            #expect(connection.receive(bytes).close == .invalidInput(.invalidUTF8))
        }
    }

    @Test func theInterfacesAdmissionRefusesADirectCallAsItRefusesAnyOther() throws {
        let call = Self.plainCalls[0] + "\0"
        let direct = try Self.answer(call, directly: true, peer: "stranger")
        #expect(direct.output == (try Self.answer(call, directly: false, peer: "stranger")).output)
        #expect(!direct.direct)  // refused before the handler
        #expect(try replies(direct.output.bytes).first?.error == "org.varlink.service.PermissionDenied")
    }

    /// Calls read together are answered in order, each whichever way it qualifies for.
    @Test func pipelinedCallsAreAnsweredInOrder() throws {
        let calls = [Self.plainCalls[0], Self.otherCalls[18], Self.plainCalls[1], Self.otherCalls[8], Self.plainCalls[2]]
        let input = calls.map { $0 + "\0" }.joined()
        let general = try Self.answer(input, directly: false)
        let direct = try Self.answer(input, directly: true)
        #expect(direct.output == general.output)
        #expect(try replies(direct.output.bytes).count == 4)  // the oneway call has none
    }

    /// A read that is one whole plain call, with nothing buffered before it, is answered
    /// without the decoder; one that completes a call begun in an earlier read, or holds more
    /// than one call, goes through it. The bytes sent back are the same every way.
    @Test func aCallSplitAcrossReadsGetsTheSameReplyAsOneReadWhole() throws {
        let call = Array((Self.plainCalls[0] + "\0").utf8)
        var outputs: [[UInt8]] = []
        for directly in [false, true] {
            for split in [call.count, 1, 20, call.count - 1] {
                let peer = Peer(name: "app")
                let connection = VarlinkConnection(service: try Self.service(), context: peer)
                connection.answersDirectly = directly
                var bytes = connection.receive(call[..<split]).bytes
                if split < call.count { bytes += connection.receive(call[split...]).bytes }
                bytes += connection.receive(call).bytes  // a lone call after the split one
                #expect(peer.log.filter { $0 == "direct" }.count == (directly ? 2 : 0))
                outputs.append(bytes)
            }
        }
        #expect(Set(outputs).count == 1)
    }

    /// The replies are appended to the buffer given, behind what it holds (the stream
    /// connection's pending output), the same bytes either way; a call the protocol closes
    /// on says so, and why.
    @Test func repliesAreAppendedBehindWhatTheBufferHolds() throws {
        let held = Array("not yet written\0".utf8)
        for directly in [false, true] {
            for input in Self.plainCalls + Self.otherCalls {
                let (expected, _) = try Self.answer(input + "\0", directly: directly)
                let connection = VarlinkConnection(service: try Self.service(), context: Peer(name: "app"),
                                                   maxMessageBytes: 256)
                connection.answersDirectly = directly
                var buffer = held
                let closes = Array((input + "\0").utf8).withUnsafeBytes {
                    connection.receive($0, from: nil, appendingRepliesTo: &buffer)
                }
                #expect(buffer == held + expected.bytes)
                #expect(closes == (expected.close != nil))
                #expect(connection.closeReason == expected.close)
            }
        }
    }

    /// Calls answered alone, without the decoder, leave its count of the stream's bytes
    /// right: each later call still carries the sender of exactly its own bytes.
    @Test func callsAfterLoneCallsCarryTheirOwnSender() throws {
        let service = try Self.service()
        service.addDirectMethod("org.example.ping.Ping", VarlinkDirectMethod(read: Self.readPing) { text, sender, peer in
            peer.log.append("direct \(sender.map { String($0.pid) } ?? "nil")")
            return PingReply(text: text, peer: peer.name)
        })
        let peer = Peer(name: "app")
        let connection = VarlinkConnection(service: service, context: peer)
        func from(_ pid: Int32) -> SenderCredentials { SenderCredentials(pid: pid, uid: 1, gid: 1) }
        let ping = Array((Self.plainCalls[0] + "\0").utf8)
        _ = connection.receive(ping, from: from(10))
        _ = connection.receive(ping, from: from(11))
        _ = connection.receive(ping + ping, from: from(12))        // two calls in one read
        _ = connection.receive(ping[..<30], from: from(13))         // one call in two reads,
        _ = connection.receive(ping[30...], from: from(13))         // one sender
        _ = connection.receive(ping, from: from(14))
        _ = connection.receive(ping[..<30], from: from(15))         // two senders: none
        _ = connection.receive(ping[30...] + ping, from: from(16))  // and a whole call of 16's
        _ = connection.receive(ping, from: from(17))
        #expect(peer.log == ["10", "11", "12", "12", "13", "14", "nil", "16", "17"].map { "direct \($0)" })
    }

    /// The context a connection's handlers are given is the one it has at the call: the direct
    /// methods bound to its context are bound again when it is replaced.
    @Test func aReplacedContextIsTheOneDirectCallsAreGiven() throws {
        let first = Peer(name: "first"), second = Peer(name: "second")
        let connection = VarlinkConnection(service: try Self.service(), context: first, maxMessageBytes: 256)
        let ping = Array((Self.plainCalls[0] + "\0").utf8)
        #expect(String(decoding: connection.receive(ping).bytes, as: UTF8.self).contains(#""peer":"first""#))
        connection.context = second
        #expect(String(decoding: connection.receive(ping).bytes, as: UTF8.self).contains(#""peer":"second""#))
        #expect(first.log == ["direct"] && second.log == ["direct"])
    }

    /// A call's envelope is the method's prefix only if every byte of it is (compared as words
    /// in place): each byte changed in turn, for methods whose prefixes end at each offset of
    /// a word, and a frame one byte too short for it, are refused.
    @Test func anEnvelopeIsThePrefixOnlyIfEveryByteIs() {
        for method in (1...9).map({ "o.e.P" + String(repeating: "i", count: $0) }) {
            let prefix = VarlinkPlainCall.prefix(of: method)
            let text = Array(#"{"text":"hi"}"#.utf8)
            let frame = prefix + text + [UInt8(ascii: "}")]
            func parameters(of frame: [UInt8]) -> [UInt8]? {
                frame.withUnsafeBytes { VarlinkPlainCall.parameters(of: $0, prefix: prefix).map(Array.init) }
            }
            #expect(parameters(of: frame) == text)
            for index in prefix.indices {
                var changed = frame
                changed[index] ^= 0x20
                #expect(parameters(of: changed) == nil, "\(method), byte \(index)")
            }
            #expect(parameters(of: Array(prefix.dropLast()) + [UInt8(ascii: "}")]) == nil)
        }
    }
}
