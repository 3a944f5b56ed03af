import Foundation
import JSONCore
import ProctorDaemon
import ProctorProtocol
import Testing
import TestSupport
import Varlink

/// `Decide` answered from its bytes (`VarlinkDirectMethod`) against the general way, on the
/// daemon's real handlers: every call, well formed or not, gets the same bytes back and the
/// same close; only the plain form takes the direct way.
@Suite(.serialized) struct DecideFastPathTests {
    private static let policy = """
        {"schema": 1, "version": "one", "apps": {"io.proctor.test.notes": {"state": "authorized",
          "match": {"executable": "/usr/bin/notes"},
          "dlp": {"print": "block", "fileExport": {"allow": ["/home/*/Documents/**"], "deny": ["/tmp/**"]},
                  "share": {"send": "managed", "receive": "managed", "exempt": ["com.partner.*", "org.exact"]},
                  "notifications": "block-org-data"}},
          "io.proctor.test.mail": {"state": "authorized"}, "io.proctor.test.old": {"state": "retired"}}}
        """

    private static let decide = Agent.Decide.qualifiedName

    /// Calls the direct way answers; `$s` is the connection's session, `$t` an id of its length
    /// that differs from it in the last byte only, `$p` its first 31 bytes.
    static let plainCalls = [
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print"}}"#,
        #"{"method":"\#(decide)","parameters":{"action":"clipboard.copy","session":"$s","size":12}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"file.export","target":"/tmp/x","size":0}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"file.export","target":"/home/ü/Documents/€ 𝄞 q.txt"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"file.export","target":"/home/a/Documents/{},:[]"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"file.export","target":""}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","target":"}"}}"#,
        #"{"method":"\#(decide)","parameters":{"target":"/home/a/Documents/x","size":7,"action":"file.export","session":"$s"}}"#,
        // Targets the engine reads as bytes: the app itself, a managed app, one not managed,
        // an id equal to another only as Unicode (KELVIN SIGN), exempt ones, notification contents.
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"clipboard.copy","target":"io.proctor.test.notes"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"clipboard.paste","target":"io.proctor.test.note"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"clipboard.copy","target":"io.proctor.test.mail"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"clipboard.copy","target":"io.proctor.test.old"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"share.send","target":"io.proctor.test.mail"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"share.send","target":"io.proctor.test.notesx"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"share.send","target":"com.partner.chat"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"share.receive","target":"org.exact"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"share.receive","target":"org.exac\#u{212A}"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"share.receive","target":"io.proctor.test.\#u{212A}"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"share.receive"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"notification","target":"org"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"notification","target":"plain"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"notification","target":"plai"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"notification","target":"orgx"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"notification","target":""}}"#,
        // A path past `maxExportPathBytes`, and one past the bytes a recorded target keeps.
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"file.export","target":"/tmp/\#(String(repeating: "é", count: 2046))"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"share.send","target":"\#(String(repeating: "€", count: 1400))"}}"#,
        // Sizes of up to 15 digits, either sign, and zero written as -0.
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"clipboard.copy","size":999999999999999}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"clipboard.copy","size":-999999999999999}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"launch","size":-1}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","size":-0}}"#,
        // Not this connection's session: the handler's own error.
        #"{"method":"\#(decide)","parameters":{"session":"0123456789abcdef0123456789abcdef","action":"print"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$t","action":"print"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$p","action":"print"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s0","action":"print"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"","action":"print"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":" ~!","action":"print"}}"#,
    ]

    /// Calls in another form than the plainest one (white space, an escape, a number written
    /// otherwise, a long size, a non-ASCII session id), answered alike the general way.
    static let otherForms = [
        #" {"method" : "io.proctor.Agent.D\u0065cide", "parameters" : {"s\u0065ssion": "$s", "action":"file.export", "target": "\/home\/a\/Documents\/b\ttab", "size": 1.0e3 } } "#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"file.export","target":"/home/ü/Documents/€ \"q\".txt"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s", "action":"print"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print"} }"#,
        #"{"method":"\#(decide)","parameters": {"session":"$s","action":"print"}}"#,
        #"{"method":"\#(decide)","parameters":{"session" :"$s","action":"print"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","size":1 }}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"pr\u0069nt"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","act\u0069on":"print"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"launch","size":-9007199254740992}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"clipboard.copy","size":1000000000000000}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"clipboard.copy","size":-1000000000000000}}"#,
        // Read as 9007199254740992 by both ways: the nearest double.
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","size":9007199254740993}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","size":12.0}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","size":1e3}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","size":1E3}}"#,
        // An escaped NUL and a surrogate pair in strings; zero written as -0.0 and 0e5.
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"file.export","target":"/tmp/a\u0000b"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"file.export","target":"/home/a/Documents/\ud834\udd1e"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s\u0000","action":"print"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"\u0024s","action":"print"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","size":-0.0}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","size":0e5}}"#,
        // A session id that is not ASCII, then one with a control character.
        #"{"method":"\#(decide)","parameters":{"session":"$sé","action":"print"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"é","action":"print"}}"#,
        "{\"method\":\"\(decide)\",\"parameters\":{\"session\":\"$s\u{7F}\",\"action\":\"print\"}}",
    ]

    /// Calls the general way answers, each with its error or its reply.
    static let otherCalls = [
        // Repeated or unknown members.
        #"{"method":"\#(decide)","parameters":{"session":"$s","session":"$s","action":"print"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","action":"print"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","size":1,"size":2}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","target":"a","target":"b"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print"},"parameters":{}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","appId":"io.proctor.test.notes"}}"#,
        // Values of the wrong type, nulls, an action that is none, sizes that are not ints.
        #"{"method":"\#(decide)","parameters":{"session":5,"action":"print"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":["print"]}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"fly"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","target":3}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","target":null}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","size":null}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","size":"3"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","size":1.5}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","size":1e300}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","size":-1.5}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","size":01}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","size":-01}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","size":-}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","size":1.}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","size":+1}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","size":true}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","size":[]}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","target":true}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","target":{}}}"#,
        #"{"method":"\#(decide)","parameters":{"session":{},"action":"print"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":null}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":""}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"Print"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print "}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"clipboard.copyx"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","":1}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","sessio":"$s"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","sessions":"$s"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print",}}"#,
        #"{"method":"\#(decide)","parameters":{,"session":"$s","action":"print"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s""action":"print"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print"}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print"}},"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","target":"a}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","target":"a\#t"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print"},"more":{"a":"}"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","target":"a"},"oneway":"}"}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print"},"parameters":{"session":"$s","action":"print"}}"#,
        #"{"method":"\#(decide)","method":"\#(decide)","parameters":{"session":"$s","action":"print"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print"},"method":"\#(decide)"}"#,
        #"{"method":"io.proctor.Agent.Decid","parameters":{"session":"$s","action":"print"}}"#,
        #"{"method":"\#(decide)x","parameters":{"session":"$s","action":"print"}}"#,
        #"{"method":"\#(decide)","parameter":{"session":"$s","action":"print"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":null,"action":"print"}}"#,
        #"{"method":"\#(decide)","parameters":{"action":"print"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s"}}"#,
        #"{"method":"\#(decide)","parameters":{}}"#,
        #"{"method":"\#(decide)","parameters":null}"#,
        #"{"method":"\#(decide)","parameters":"print"}"#,
        #"{"method":"\#(decide)"}"#,
        // Flags, and another order of the envelope.
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print"},"oneway":true}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print"},"oneway":false}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print"},"more":true}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print"},"upgrade":true}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print"},"upgrade":1}"#,
        #"{"more":false,"method":"\#(decide)","parameters":{"session":"$s","action":"print"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","size":9007199254740994}}"#,
        #"{"parameters":{"session":"$s","action":"print"},"method":"\#(decide)"}"#,
        // Not a Decide call, not JSON, not an object.
        #"{"method":"io.proctor.Agent.Decides","parameters":{"session":"$s","action":"print"}}"#,
        #"{"method":"io.proctor.Admin.Decide","parameters":{"session":"$s","action":"print"}}"#,
        #"{"method":"\#(Agent.GetInfo.qualifiedName)","parameters":{}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print"}}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print"},}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"pri\#u{7}nt"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","target":"\x"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","size":01}}"#,
        #"[{"method":"\#(decide)"}]"#,
        // A lone surrogate, a number beyond a double, a key escaped to another's name.
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"file.export","target":"\ud800"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"file.export","target":"\udd1e\ud834"}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","size":1e400}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print","\u0073ize":1,"size":2}}"#,
        #"{"method":"\#(decide)","parameters":{"session":"$s","action":"print\u0000"}}"#,
    ]

    private func directory() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory(prefix: "proctor-decide-direct")
        try FileManager.default.createDirectory(atPath: directory.path + "/config/policy.d", withIntermediateDirectories: true)
        try Data(Self.policy.utf8).write(to: directory.appending("config/policy.d/00.json"))
        return directory
    }

    /// What the daemon answers to `input` on a new connection with a session, and whether it
    /// closes the connection; the session's id reads `$s` in the output.
    private func answer(_ input: [UInt8], _ daemon: SocketlessDaemon, directly: Bool) throws -> VarlinkConnectionOutput {
        try answer(reads: [input], daemon, directly: directly)
    }

    /// As `answer(_:_:directly:)`, each of `reads` sent and answered on its own.
    private func answer(reads: [[UInt8]], _ daemon: SocketlessDaemon, directly: Bool) throws -> VarlinkConnectionOutput {
        let connection = daemon.connect(to: .agent, answersDirectly: directly)
        defer { connection.close() }
        var register: [UInt8] = []
        VarlinkCall(method: Agent.Register.qualifiedName, parameters: ["appId": "io.proctor.test.notes"]).encode(to: &register)
        connection.send(register)
        try daemon.settle()
        var decoder = VarlinkFrameDecoder()
        decoder.append(connection.takeOutput().bytes)
        let session = try #require(try decoder.nextReply()?.parameters["session"]?.stringValue)
        #expect(session.utf8.count == 32)
        let lastByteChanged = session.dropLast() + (session.hasSuffix("0") ? "1" : "0")
        // Back in the output, the id that differs in the last byte first, then the session,
        // then the rest of its prefix.
        let placeholders = [("$t", String(lastByteChanged)), ("$s", session), ("$p", String(session.dropLast()))]
        var output = VarlinkConnectionOutput()
        for input in reads {
            connection.send(placeholders.reduce(input) { Self.replacing($1.0, with: $1.1, in: $0) })
            try daemon.settle()
            let taken = connection.takeOutput()
            output.bytes += taken.bytes
            output.close = output.close ?? taken.close
        }
        output.bytes = placeholders.reduce(output.bytes) { Self.replacing($1.1, with: $1.0, in: $0) }
        return output
    }

    /// Byte by byte: the input may be invalid UTF-8, which a `String` would repair.
    private static func replacing(_ text: String, with replacement: String, in bytes: [UInt8]) -> [UInt8] {
        let pattern = Array(text.utf8)
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index...].starts(with: pattern) {
                out += replacement.utf8
                index += pattern.count
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return out
    }

    /// Compares the two ways on `input`; returns how many calls the direct way answered.
    private func compare(_ input: [UInt8]) throws -> Int {
        try compare(reads: [input])
    }

    /// As `compare(_:)`, each of `reads` sent and answered on its own.
    private func compare(reads: [[UInt8]]) throws -> Int {
        let directory = try directory()
        defer { directory.remove() }
        let daemon = try SocketlessDaemon(directory: directory.path)
        let general = try answer(reads: reads, daemon, directly: false)
        #expect(daemon.directlyAnsweredCalls == 0)
        let direct = try answer(reads: reads, daemon, directly: true)
        #expect(direct == general, "\(String(decoding: direct.bytes, as: UTF8.self)) ≠ \(String(decoding: general.bytes, as: UTF8.self))")
        return daemon.directlyAnsweredCalls
    }

    @Test(arguments: plainCalls)
    func aPlainDecideIsAnsweredDirectlyAsTheGeneralWayAnswersIt(_ call: String) throws {
        #expect(try compare(Array((call + "\0").utf8)) == 1)
    }

    @Test(arguments: otherCalls + otherForms)
    func everyOtherCallGetsTheGeneralWaysAnswer(_ call: String) throws {
        #expect(try compare(Array((call + "\0").utf8)) == 0)
    }

    /// The four members in every order, each call answered directly as the general way answers it.
    @Test func theMembersAreReadInAnyOrder() throws {
        let members = [#""session":"$s""#, #""action":"file.export""#, #""target":"/home/a/Documents/x""#, #""size":3"#]
        func orders(_ rest: [String]) -> [[String]] {
            rest.isEmpty ? [[]] : rest.indices.flatMap { index in
                orders(rest.enumerated().filter { $0.offset != index }.map(\.element)).map { [rest[index]] + $0 }
            }
        }
        let calls = orders(members).map { #"{"method":"\#(Self.decide)","parameters":{\#($0.joined(separator: ","))}}"# }
        #expect(calls.count == 24)
        #expect(try compare(reads: calls.map { Array(($0 + "\0").utf8) }) == 24)
    }

    /// Invalid UTF-8 in any string of a call that is otherwise plain: the general way closes
    /// the connection, so the direct way must leave it alone.
    @Test(arguments: [
        (#""session":""#, #"","action":"print""#), (#""session":"$s","action":""#, #"""#),
        (#""session":"$s","action":"file.export","target":""#, #"""#), (#""session":"$s","action":"print",""#, #"":1"#),
    ])
    func invalidUTF8InAnyStringIsLeftToTheGeneralWay(_ before: String, _ after: String) throws {
        for invalid: [UInt8] in [[0xFF], [0xC3, 0x28], [0xED, 0xA0, 0x80], [0xC0, 0xAF], [0xE2, 0x82]] {
            let call = Array(#"{"method":"\#(Self.decide)","parameters":{\#(before)"#.utf8) + invalid + Array((after + "}}\0").utf8)
            #expect(try compare(call) == 0)
        }
    }

    @Test func invalidUTF8AndAnOversizedCallCloseTheConnectionEitherWay() throws {
        var invalid = Array(#"{"method":"\#(Self.decide)","parameters":{"session":"$s","action":"file.export","target":"#.utf8)
        invalid += [UInt8(ascii: "\""), 0xFF, UInt8(ascii: "\"")] + Array("}}".utf8) + [0]
        #expect(try compare(invalid) == 0)
        let huge = #"{"method":"\#(Self.decide)","parameters":{"session":"$s","action":"print","target":""#
            + String(repeating: "a", count: 2 << 20) + "\"}}\0"
        #expect(try compare(Array(huge.utf8)) == 0)
    }

    @Test func pipelinedCallsAreAnsweredInOrderEitherWay() throws {
        let calls = [Self.plainCalls[0], Self.otherCalls[8], Self.plainCalls[2], Self.otherCalls[56], Self.plainCalls[6],
                     Self.plainCalls[3]]
        #expect(try compare(Array(calls.map { $0 + "\0" }.joined().utf8)) == 4)
    }

    /// One call a read, as an app sends them: its session, another id, its session again
    /// (the connection compares an id with the session it found last before hashing it),
    /// then a malformed call, answered alike either way.
    @Test func callsReadOneAtATimeAreAnsweredAlikeEitherWay() throws {
        let known = #"{"method":"\#(Self.decide)","parameters":{"session":"$s","action":"print"}}"#
        let unknown = #"{"method":"\#(Self.decide)","parameters":{"session":"0123456789abcdef0123456789abcdef","action":"print"}}"#
        let prefix = #"{"method":"\#(Self.decide)","parameters":{"session":"$s","action":"print"}}"#.dropLast(3)
        let lastByte = #"{"method":"\#(Self.decide)","parameters":{"session":"$t","action":"print"}}"#
        let shorter = #"{"method":"\#(Self.decide)","parameters":{"session":"$p","action":"print"}}"#
        let calls = [known, unknown, known, known, String(prefix) + "x\"}}", known, lastByte, known, shorter, lastByte,
                     known, Self.otherForms[2], known]
        #expect(try compare(reads: calls.map { Array(($0 + "\0").utf8) }) == 11)
    }

    /// Calls as the SDK writes them (`readCanonical`), naming the connection's session, one
    /// that differs from it in the last byte, its prefix, another id, and the session again:
    /// the session id is compared in place with the last one found, and every call is answered
    /// directly as the general way answers it.
    @Test func theSDKsFormIsAnsweredAlikeEitherWayWhicheverSessionItNames() throws {
        func call(_ session: String, _ rest: String = "") -> String {
            #"{"method":"\#(Self.decide)","parameters":{"action":"file.export","session":"\#(session)"\#(rest)}}"#
        }
        let calls = [call("$s"), call("$s", #","size":3"#), call("$t"), call("$s", #","target":"/tmp/x""#), call("$p"),
                     call("$s", #","size":3,"target":"/home/a/Documents/x""#), call("0123456789abcdef0123456789abcdef"),
                     call("$t"), call("$s")]
        #expect(try compare(reads: calls.map { Array(($0 + "\0").utf8) }) == calls.count)
    }

    /// Two policies whose rules name the asking app's entry (`apps["…"]`, escaped in the
    /// reply), `defaults` and built-in settings, and list entries; the second moves rules
    /// between layers and lists, so after a reload the same calls are decided by other text.
    private static let reloadPolicies = [
        """
        {"schema": 1, "version": "one",
         "defaults": {"dlp": {"share": {"exempt": ["io.partner.*"]}, "fileExport": {"deny": ["/etc/**"]}}},
         "apps": {"io.proctor.test.notes": {"state": "authorized", "match": {"executable": "/usr/bin/notes"},
           "dlp": {"print": "block", "clipboard": {"level": "managed", "charLimit": 10}, "notifications": "block-org-data",
                   "share": {"send": "managed", "receive": "none"},
                   "fileExport": {"allow": ["/home/*/Documents/**"], "deny": ["/tmp/**", "/var/**"]}}},
          "io.proctor.test.mail": {"state": "authorized", "match": {"executable": "/usr/bin/mail"}},
          "io.proctor.test.old": {"state": "retired", "match": {"executable": "/usr/bin/old"}}}}
        """,
        """
        {"schema": 1, "version": "two",
         "defaults": {"dlp": {"print": "block", "screenCapture": "block", "share": {"send": "managed"},
                              "fileExport": {"deny": ["/srv/**", "/tmp/**"]}},
                      "compliance": {"minVersion": "2.0.0", "onViolation": "warn"}},
         "apps": {"io.proctor.test.notes": {"state": "authorized", "match": {"executable": "/usr/bin/notes"},
           "dlp": {"clipboard": {"level": "blocked"}, "notifications": "block",
                   "share": {"exempt": ["io.other.*", "io.partner.*"]}}},
          "io.proctor.test.mail": {"state": "blocked", "match": {"executable": "/usr/bin/mail"}}}}
        """,
    ]

    /// Every action, allowed and denied where the policies allow both: their parameters
    /// after the session's.
    private static let everyAction = [
        #""action":"launch""#,
        #""action":"clipboard.copy","target":"io.proctor.test.mail""#,
        #""action":"clipboard.copy","target":"io.proctor.test.notes""#,
        #""action":"clipboard.copy","target":"org.elsewhere","size":5"#,
        #""action":"clipboard.copy","target":"org.elsewhere","size":50"#,
        #""action":"clipboard.paste","target":"io.proctor.test.mail""#,
        #""action":"clipboard.paste""#,
        #""action":"share.send","target":"io.partner.viewer""#,
        #""action":"share.send","target":"io.proctor.test.mail""#,
        #""action":"share.send","target":"io.proctor.test.old""#,
        #""action":"share.receive","target":"io.partner.viewer""#,
        #""action":"share.receive","target":"io.proctor.test.mail""#,
        #""action":"print""#,
        #""action":"screen-capture""#,
        #""action":"file.export","target":"/home/ü/Documents/a \"b\"\tc.txt""#,
        #""action":"file.export","target":"/tmp/x""#,
        #""action":"file.export","target":"/var/x""#,
        #""action":"file.export","target":"/srv/x""#,
        #""action":"file.export","target":"/etc/x""#,
        #""action":"file.export","target":"/home/a/Music/x""#,
        #""action":"file.export","target":"relative/x""#,
        #""action":"file.export""#,
        #""action":"notification","target":"org""#,
        #""action":"notification","target":"plain""#,
        #""action":"notification","target":"other""#,
    ].map { #"{"method":"\#(decide)","parameters":{"session":"$s",\#($0)}}"# }

    /// The replies to every action are the same bytes either way, under the first policy and,
    /// on the same daemon, after a reload to the second, which changes most of them.
    @Test func everyActionIsAnsweredAlikeEitherWayBeforeAndAfterAReload() throws {
        let directory = try TemporaryDirectory(prefix: "proctor-decide-reload")
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.path + "/config/policy.d", withIntermediateDirectories: true)
        let policyFile = directory.appending("config/policy.d/00.json")
        try Data(Self.reloadPolicies[0].utf8).write(to: policyFile)
        let daemon = try SocketlessDaemon(directory: directory.path)
        let reads = Self.everyAction.map { Array(($0 + "\0").utf8) }
        var generalReplies: [[UInt8]] = []
        for (round, policy) in Self.reloadPolicies.enumerated() {
            if round > 0 {
                try Data(policy.utf8).write(to: policyFile)
                let admin = daemon.connect(to: .admin)
                defer { admin.close() }
                var reload: [UInt8] = []
                VarlinkCall(method: Admin.Reload.qualifiedName).encode(to: &reload)
                admin.send(reload)
                try daemon.settle()
                var decoder = VarlinkFrameDecoder()
                decoder.append(admin.takeOutput().bytes)
                #expect(try decoder.nextReply()?.error == nil)
                #expect(daemon.policyInForce.version == "two")
            }
            let answered = daemon.directlyAnsweredCalls
            let general = try answer(reads: reads, daemon, directly: false)
            let direct = try answer(reads: reads, daemon, directly: true)
            // A call with an escape in a string is not in the plainest form: it goes the general way.
            #expect(daemon.directlyAnsweredCalls - answered == reads.filter { !$0.contains(UInt8(ascii: "\\")) }.count)
            #expect(direct == general, "\(String(decoding: direct.bytes, as: UTF8.self)) ≠ \(String(decoding: general.bytes, as: UTF8.self))")
            generalReplies.append(general.bytes)
        }
        let replies = generalReplies.map { String(decoding: $0, as: UTF8.self) }
        #expect(replies[0] != replies[1])
        for text in [#""allowed":true"#, #""allowed":false"#, #"apps[\"io.proctor.test.notes\"].dlp."#, #"defaults.dlp."#,
                     #"builtin."#, #".fileExport.deny[1]"#] {
            #expect(replies.allSatisfy { $0.contains(text) }, "\(text) in every round")
        }
    }
}
