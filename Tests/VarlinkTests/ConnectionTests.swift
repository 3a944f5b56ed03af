import JSONCore
import Testing
@testable import Varlink

/// A per-connection context of the kind a server owner chooses.
final class Peer {
    let name: String
    var log: [String] = []
    init(name: String) { self.name = name }
}

/// Keeps stream handles the way a daemon keeps its subscribers.
final class Subscribers {
    var handles: [VarlinkReplyHandle] = []
}

let pingInterface = """
    # A test interface.
    interface org.example.ping

    type Mode (loud, quiet)

    # Echoes the text.
    method Ping(text: string, mode: ?Mode) -> (text: string, peer: string)
    # Streams `count` numbers, then ends.
    method Count(count: int) -> (n: int)
    # Replies later, when the test decides.
    method Watch() -> (event: string)
    method Forget(note: string) -> ()
    method Fail() -> ()
    method Unimplemented() -> ()

    error Refused (why: string)
    """

/// The ping service: `Ping` echoes with the peer's name, `Count` streams, `Watch` hands its
/// reply to `subscribers`, `Forget` logs its note in the peer, `Fail` throws `Refused`;
/// `admission` guards them all.
func makeService(subscribers: Subscribers = Subscribers(),
                 admission: VarlinkService<Peer>.Admission? = nil) throws -> VarlinkService<Peer> {
    let service = VarlinkService<Peer>(vendor: "Example", product: "ping", version: "1.0", url: "https://example.org")
    try service.addInterface(pingInterface, methods: [
        "Ping": VarlinkMethod { call, peer, reply in
            reply.reply(["text": call.parameters["text"]!, "peer": .string(peer.name)])
        },
        "Count": VarlinkMethod(requiresMore: true) { call, _, reply in
            let count = call.parameters["count"]!.intValue!
            for n in 0..<count { reply.send(["n": .number(n)]) }
            reply.reply(["n": .number(count)])
        },
        "Watch": VarlinkMethod(requiresMore: true) { _, peer, reply in
            reply.onCancel = { peer.log.append("cancelled") }
            subscribers.handles.append(reply)
        },
        "Forget": VarlinkMethod { call, peer, reply in
            peer.log.append(call.parameters["note"]!.stringValue!)
            reply.reply()
        },
        "Fail": VarlinkMethod { _, _, _ throws(VarlinkError) in
            throw VarlinkError(name: "org.example.ping.Refused", parameters: ["why": "because"])
        },
    ], admission: admission)
    return service
}

func replies(_ bytes: [UInt8]) throws -> [VarlinkReply] {
    var decoder = VarlinkFrameDecoder()
    decoder.append(bytes)
    var out: [VarlinkReply] = []
    while let reply = try decoder.nextReply() { out.append(reply) }
    #expect(decoder.bufferedByteCount == 0, "trailing bytes after the last reply")
    return out
}

func call(_ method: String, _ parameters: [String: JSONValue] = [:], more: Bool = false, oneway: Bool = false) -> [UInt8] {
    VarlinkCall(method: method, parameters: parameters, oneway: oneway, more: more).encoded()
}

@Suite struct ConnectionTests {
    @Test func answersACallWithTheConnectionsContext() throws {
        let connection = VarlinkConnection(service: try makeService(), context: Peer(name: "alice"))
        let output = connection.receive(call("org.example.ping.Ping", ["text": "hi"]))
        #expect(output.close == nil)
        #expect(try replies(output.bytes) == [VarlinkReply(parameters: ["text": "hi", "peer": "alice"])])
    }

    @Test func getInfoAndGetInterfaceDescription() throws {
        let connection = VarlinkConnection(service: try makeService(), context: Peer(name: "a"))
        let output = connection.receive(call("org.varlink.service.GetInfo")
            + call("org.varlink.service.GetInterfaceDescription", ["interface": "org.example.ping"])
            + call("org.varlink.service.GetInterfaceDescription", ["interface": "org.example.nope"]))
        #expect(try replies(output.bytes) == [
            VarlinkReply(parameters: ["vendor": "Example", "product": "ping", "version": "1.0", "url": "https://example.org",
                                      "interfaces": ["org.varlink.service", "org.example.ping"]]),
            VarlinkReply(parameters: ["description": .string(pingInterface)]),
            VarlinkReply(error: .interfaceNotFound("org.example.nope")),
        ])
        #expect(VarlinkError.interfaceNotFound("x").name == "org.varlink.service.InterfaceNotFound")
    }

    @Test func standardErrorsCarryTheirExactNamesAndParameters() throws {
        let connection = VarlinkConnection(service: try makeService(), context: Peer(name: "a"))
        let cases: [([UInt8], String, [String: JSONValue])] = [
            (call("org.example.ping.Nope"), "org.varlink.service.MethodNotFound", ["method": "org.example.ping.Nope"]),
            (call("org.example.other.Ping"), "org.varlink.service.InterfaceNotFound", ["interface": "org.example.other"]),
            (call("NoDots"), "org.varlink.service.InterfaceNotFound", ["interface": "NoDots"]),
            (call("org.example.ping.Unimplemented"), "org.varlink.service.MethodNotImplemented",
             ["method": "org.example.ping.Unimplemented"]),
            (call("org.example.ping.Ping"), "org.varlink.service.InvalidParameter", ["parameter": "text"]),
            (call("org.example.ping.Ping", ["text": 1]), "org.varlink.service.InvalidParameter", ["parameter": "text"]),
            (call("org.example.ping.Ping", ["text": "x", "mode": "shout"]), "org.varlink.service.InvalidParameter",
             ["parameter": "mode"]),
            (call("org.example.ping.Ping", ["text": "x", "extra": 1]), "org.varlink.service.InvalidParameter",
             ["parameter": "extra"]),
            (call("org.example.ping.Count", ["count": 2]), "org.varlink.service.ExpectedMore", [:]),
            (call("org.example.ping.Fail"), "org.example.ping.Refused", ["why": "because"]),
        ]
        for (bytes, name, parameters) in cases {
            let output = connection.receive(bytes)
            #expect(output.close == nil)
            #expect(try replies(output.bytes) == [VarlinkReply(parameters: parameters, error: name)], "\(name)")
        }
    }

    @Test func moreGivesContinuingRepliesThenAFinalOne() throws {
        let connection = VarlinkConnection(service: try makeService(), context: Peer(name: "a"))
        let output = connection.receive(call("org.example.ping.Count", ["count": 3], more: true))
        #expect(try replies(output.bytes) == [
            VarlinkReply(parameters: ["n": 0], continues: true), VarlinkReply(parameters: ["n": 1], continues: true),
            VarlinkReply(parameters: ["n": 2], continues: true), VarlinkReply(parameters: ["n": 3]),
        ])
    }

    @Test func onewayRunsTheHandlerAndSendsNothing() throws {
        let peer = Peer(name: "a")
        let connection = VarlinkConnection(service: try makeService(), context: peer)
        let output = connection.receive(call("org.example.ping.Forget", ["note": "n1"], oneway: true)
            + call("org.example.ping.Nope", oneway: true)
            + call("org.example.ping.Ping", ["text": "after"]))
        #expect(peer.log == ["n1"])
        #expect(try replies(output.bytes) == [VarlinkReply(parameters: ["text": "after", "peer": "a"])])
    }

    @Test func laterRepliesGoToTheOwnerAndQueuedCallsWaitTheirTurn() throws {
        let subscribers = Subscribers()
        let peer = Peer(name: "a")
        let connection = VarlinkConnection(service: try makeService(subscribers: subscribers), context: peer)
        var later: [VarlinkConnectionOutput] = []
        connection.onLaterOutput = { later.append($0) }

        let first = connection.receive(call("org.example.ping.Watch", more: true) + call("org.example.ping.Ping", ["text": "queued"]))
        #expect(first.isEmpty)
        let handle = try #require(subscribers.handles.first)
        handle.send(["event": "one"])
        handle.send(["event": "two"])
        #expect(try later.flatMap { try replies($0.bytes) } == [
            VarlinkReply(parameters: ["event": "one"], continues: true), VarlinkReply(parameters: ["event": "two"], continues: true),
        ])
        later = []
        handle.reply(["event": "end"])
        // The stream's end releases the queued Ping, answered in the same output.
        #expect(later.count == 1)
        #expect(try replies(later[0].bytes) == [
            VarlinkReply(parameters: ["event": "end"]), VarlinkReply(parameters: ["text": "queued", "peer": "a"]),
        ])
        #expect(peer.log.isEmpty)
    }

    @Test func closingCancelsAnOpenStreamAndDropsLaterReplies() throws {
        let subscribers = Subscribers()
        let peer = Peer(name: "a")
        let connection = VarlinkConnection(service: try makeService(subscribers: subscribers), context: peer)
        var later: [VarlinkConnectionOutput] = []
        connection.onLaterOutput = { later.append($0) }
        _ = connection.receive(call("org.example.ping.Watch", more: true))
        let handle = try #require(subscribers.handles.first)
        #expect(handle.isConnected)
        connection.closed()
        #expect(peer.log == ["cancelled"])
        #expect(!handle.isConnected)
        handle.send(["event": "lost"])
        #expect(later.isEmpty)
        #expect(connection.receive(call("org.example.ping.Ping", ["text": "x"])).isEmpty)
    }

    @Test func queuedInputBeyondTheLimitCloses() throws {
        let subscribers = Subscribers()
        let connection = VarlinkConnection(service: try makeService(subscribers: subscribers), context: Peer(name: "a"),
                                           maxMessageBytes: 64)
        #expect(connection.receive(call("org.example.ping.Watch", more: true)).isEmpty)
        let ping = call("org.example.ping.Ping", ["text": "x"])
        #expect(connection.receive(ping).isEmpty)
        let output = connection.receive(ping + ping)
        #expect(output.close == .tooMuchPendingInput(limit: 64))
    }

    @Test func garbageClosesWithoutAReply() throws {
        for (bytes, reason) in [
            (Array("{nope".utf8) + [0], "invalid input: message is not valid JSON"),
            ([0xFF, 0], "invalid input: message is not valid UTF-8"),
            (Array("[]".utf8) + [0], "invalid input: message is an array, expected a JSON object"),
            (Array(repeating: UInt8(ascii: " "), count: 100), "invalid input: message larger than 64 bytes"),
        ] {
            let connection = VarlinkConnection(service: try makeService(), context: Peer(name: "a"), maxMessageBytes: 64)
            let output = connection.receive(call("org.example.ping.Ping", ["text": "first"]) + bytes)
            #expect(try replies(output.bytes) == [VarlinkReply(parameters: ["text": "first", "peer": "a"])])
            #expect(output.close?.description.hasPrefix(reason) == true, "\(reason)")
            #expect(connection.receive(call("org.example.ping.Ping", ["text": "x"])).isEmpty)
        }
    }

    @Test func aBadProtocolMemberGetsInvalidParameterThenClose() throws {
        for (text, parameter) in [(#"{"parameters":{}}"#, "method"), (#"{"method":"a.b.C","more":1}"#, "more")] {
            let connection = VarlinkConnection(service: try makeService(), context: Peer(name: "a"))
            let output = connection.receive(Array(text.utf8) + [0])
            #expect(try replies(output.bytes) == [VarlinkReply(error: .invalidParameter(parameter))])
            #expect(output.close != nil)
        }
    }

    /// A repeated key (exactly, or in another Unicode form, which a dictionary cannot hold
    /// beside the first either) is answered InvalidParameter naming the parameter it is in,
    /// or the protocol member repeated, then the connection closes.
    @Test(arguments: [
        (#"{"method":"org.example.ping.Ping","parameters":{"text":"a","text":"b"}}"#, "text"),
        ("{\"method\":\"org.example.ping.Ping\",\"parameters\":{\"text\":{\"caf\u{E9}\":1,\"cafe\u{301}\":2}}}", "text"),
        (#"{"method":"org.example.ping.Ping","parameters":{"text":{"caf\u00e9":1,"cafe\u0301":2}}}"#, "text"),
        (#"{"method":"org.example.ping.Ping","method":"org.example.ping.Ping","parameters":{}}"#, "method"),
        (#"{"method":"org.example.ping.Ping","parameters":{},"parameters":{}}"#, "parameters"),
    ])
    func aRepeatedKeyGetsInvalidParameterThenClose(_ text: String, _ parameter: String) throws {
        let connection = VarlinkConnection(service: try makeService(), context: Peer(name: "a"))
        let output = connection.receive(Array(text.utf8) + [0])
        #expect(try replies(output.bytes) == [VarlinkReply(error: .invalidParameter(parameter))])
        guard case .invalidInput(.duplicateMember(parameter, let error))? = output.close else {
            Issue.record("closed with \(String(describing: output.close))")
            return
        }
        #expect(error.message.hasPrefix("duplicate key"))
    }

    @Test func addInterfaceRejectsBadInput() throws {
        let service = try makeService()
        #expect(throws: VarlinkServiceError.duplicateInterface("org.example.ping")) {
            try service.addInterface(pingInterface, methods: [:])
        }
        #expect(throws: VarlinkServiceError.undefinedMethod(interface: "org.example.two", method: "Missing")) {
            try service.addInterface("interface org.example.two\nmethod A() -> ()",
                                     methods: ["Missing": VarlinkMethod { _, _, reply in reply.reply() }])
        }
        #expect {
            try service.addInterface("interface broken", methods: [:])
        } throws: { error in
            guard case .invalidInterface(let parseError) = error as? VarlinkServiceError else { return false }
            return parseError.message == "broken is not a valid interface name"
        }
    }
}
