import JSONCore
import ProctorPolicy
@testable import ProctorProtocol
import Testing

/// `Agent.Decide` read from bytes for the direct way: the same values as the general reading
/// (`DecideReplyTests`: the reply written).
@Suite struct DecideFastPathTests {
    /// What the direct reader reads from `bytes`, its session made a `String` to compare.
    private static func readDirectly(_ bytes: [UInt8],
                                     with read: (UnsafeRawBufferPointer) -> Agent.Decide.PlainRequest? = { Agent.Decide.PlainRequest.read($0) })
        -> Agent.Decide.Request? {
        bytes.withUnsafeBytes { parameters in
            read(parameters).map {
                Agent.Decide.Request(session: String(decoding: $0.session, as: UTF8.self), action: $0.action,
                                     target: $0.target.map { String(decoding: $0, as: UTF8.self) }, size: $0.size)
            }
        }
    }

    private static let sessionID = "0123456789abcdef0123456789ABCDEF"

    /// The calls the SDK writes, with each action and each combination of the optional members.
    private static var canonicalCalls: [String] {
        Action.allCases.flatMap { action in
            let start = #"{"action":"\#(action.rawValue)","session":"\#(sessionID)""#
            return [start + "}", start + #","size":42}"#, start + #","target":"/home/ü/a b.txt"}"#,
                    start + #","size":-7,"target":"org"}"#, start + #","size":0,"target":""}"#]
        }
    }

    /// The SDK's form is read without the search for each key (`readCanonical`), to the values the
    /// reader of any order reads.
    @Test func theSDKsFormIsReadCanonicallyToTheSameValues() throws {
        for call in Self.canonicalCalls {
            let bytes = Array(call.utf8)
            let canonical = Self.readDirectly(bytes, with: { Agent.Decide.PlainRequest.readCanonical($0) })
            #expect(canonical != nil, "\(call)")
            #expect(canonical == Self.readDirectly(bytes, with: Agent.Decide.PlainRequest.readAnyOrder), "\(call)")
            let general = try Agent.Decide.Request(try #require(try JSONParser.parse(bytes).objectValue))
            #expect(canonical == general, "\(call)")
        }
    }

    /// Any byte of the SDK's form replaced, inserted or removed: the canonical reader takes the
    /// result only if the reader of any order takes it, to the same values; and `read` always
    /// answers as the reader of any order.
    @Test func aChangedByteAnywhereIsReadAsTheReaderOfAnyOrderReadsIt() {
        let substitutes: [UInt8] = [0x00, 0x1F, 0x20, 0x22, 0x2C, 0x2D, 0x30, 0x35, 0x3A, 0x5C, 0x61, 0x63, 0x7A, 0x7D, 0x7F, 0xC3, 0xFF]
        for call in Self.canonicalCalls where call.hasPrefix(#"{"action":"share.receive""#) || call.hasPrefix(#"{"action":"clipboard.paste""#) {
            let bytes = Array(call.utf8)
            var changed: [[UInt8]] = []
            for offset in bytes.indices {
                var removed = bytes
                removed.remove(at: offset)
                changed.append(removed)
                for substitute in substitutes {
                    var replaced = bytes
                    replaced[offset] = substitute
                    changed.append(replaced)
                    var inserted = bytes
                    inserted.insert(substitute, at: offset)
                    changed.append(inserted)
                }
            }
            for variant in changed {
                let anyOrder = Self.readDirectly(variant, with: Agent.Decide.PlainRequest.readAnyOrder)
                if let canonical = Self.readDirectly(variant, with: { Agent.Decide.PlainRequest.readCanonical($0) }) {
                    #expect(canonical == anyOrder, "\(variant)")
                }
                #expect(Self.readDirectly(variant) == anyOrder, "\(variant)")
                #expect(Self.readDirectly(variant, with: Self.readKnowingTheSession) == anyOrder, "\(variant)")
            }
        }
    }

    /// `read` told the id the caller named last, as the connection tells it.
    private static func readKnowingTheSession(_ parameters: UnsafeRawBufferPointer) -> Agent.Decide.PlainRequest? {
        Array(sessionID.utf8).withUnsafeBytes { Agent.Decide.PlainRequest.read(parameters, knownSessionID: $0) }
    }

    /// The id told is compared in place: the call that names it is read to the same values and
    /// says so; a call naming another id is read as ever, and says it is not that one.
    @Test func theSessionIDToldIsComparedInPlace() throws {
        for call in Self.canonicalCalls {
            let bytes = Array(call.utf8)
            let known = bytes.withUnsafeBytes { Self.readKnowingTheSession($0)?.sessionIsKnown }
            #expect(known == true, "\(call)")
            #expect(Self.readDirectly(bytes, with: Self.readKnowingTheSession) == Self.readDirectly(bytes), "\(call)")
            let other = Array(call.replacing(Self.sessionID, with: String(Self.sessionID.reversed())).utf8)
            let otherKnown = other.withUnsafeBytes { Self.readKnowingTheSession($0)?.sessionIsKnown }
            #expect(otherKnown == false, "\(call)")
            #expect(Self.readDirectly(other, with: Self.readKnowingTheSession) == Self.readDirectly(other), "\(call)")
        }
        let anyOrder = Array(#"{"session":"\#(Self.sessionID)","action":"print"}"#.utf8)
        #expect(anyOrder.withUnsafeBytes { Self.readKnowingTheSession($0)?.sessionIsKnown } == false)
    }

    /// A session id of another length, members in another order: not the canonical form, read
    /// all the same.
    @Test(arguments: [
        #"{"action":"launch","session":"0123456789abcdef0123456789abcde"}"#,
        #"{"action":"launch","session":"0123456789abcdef0123456789abcdef0"}"#,
        #"{"action":"launch","session":""}"#,
        #"{"session":"0123456789abcdef0123456789abcdef","action":"launch"}"#,
        #"{"action":"launch","session":"0123456789abcdef0123456789abcdef","target":"t","size":1}"#,
    ])
    func otherFormsAreLeftToTheReaderOfAnyOrder(_ text: String) throws {
        let bytes = Array(text.utf8)
        #expect(Self.readDirectly(bytes, with: { Agent.Decide.PlainRequest.readCanonical($0) }) == nil)
        let general = try Agent.Decide.Request(try #require(try JSONParser.parse(bytes).objectValue))
        #expect(Self.readDirectly(bytes) == general)
    }

    @Test(arguments: [
        #"{"session":"s","action":"launch"}"#,
        #"{"size":-3,"target":"","action":"share.send","session":"abc"}"#,
        #"{"session":"0123456789abcdef0123456789abcdef","action":"file.export","target":"/home/ü/€ 𝄞.txt","size":42}"#,
        #"{"action":"clipboard.copy","session":" ~!","size":999999999999999,"target":"{}[],:"}"#,
        #"{"target":"io.proctor.a","action":"clipboard.paste","size":-999999999999999,"session":""}"#,
        #"{"session":"s","action":"notification","target":"org","size":0}"#,
        #"{"session":"s","action":"print","size":-0}"#,
    ])
    func whatTheDirectReaderTakesItReadsAsTheGeneralReaderDoes(_ text: String) throws {
        let general = try Agent.Decide.Request(try #require(try JSONParser.parse(Array(text.utf8)).objectValue))
        #expect(Self.readDirectly(Array(text.utf8)) == general)
    }

    /// Every action, by its name's bytes.
    @Test(arguments: Action.allCases)
    func everyActionIsReadByItsName(_ action: Action) {
        let text = #"{"session":"s","action":"\#(action.rawValue)"}"#
        #expect(Self.readDirectly(Array(text.utf8))?.action == action)
    }

    @Test(arguments: [
        #"{"session":"s","action":"launch","session":"t"}"#, #"{"session":"s","action":"launch","extra":1}"#,
        #"{"target":"a","session":"s","action":"launch","target":"b"}"#, #"{"size":1,"session":"s","action":"print","action":"print"}"#,
        #"{"action":"print","size":1,"session":"s","size":1}"#, #"{"target":"a","size":1,"session":"s","action":"print","session":"s"}"#,
        #"{"session":"s","action":"fly"}"#, #"{"session":"s","action":"launch","target":null}"#,
        #"{"session":"s","action":"launch","size":0.5}"#, #"{"session":"s"}"#, #"{"action":"launch"}"#, "[]", "null",
        #"{"session":"s","action":"launch","size":1.0}"#, #"{"session":"s","action":"launch","size":1e2}"#,
        #"{"session":"s","action":"launch","size":1000000000000000}"#, #"{"session":"s","action":"launch","size":01}"#,
        #"{"session":"s","action":"launch","size":-}"#, #"{"session":"s","action":"launch","size":"1"}"#,
        #"{"session":"s", "action":"launch"}"#, #" {"session":"s","action":"launch"}"#, #"{"session":"s","action":"launch"} "#,
        #"{"session":"\u0073","action":"launch"}"#, #"{"session":"é","action":"launch"}"#,
        #"{"session":"s","action":"launch","target":"a\/b"}"#, #"{"session":"s","action":"launch","target":"a"#,
        #"{"session":"s","action":"launch"}}"#, #"{"session":"s","action":"launch"},{}"#, #"{"session":"s","action":"launch",}"#,
        #"{"session":"s","action":"launch""size":1}"#, #"{"session":"s","action":"launch","size":1"#, "{}", "{", "",
    ])
    func anythingElseIsLeftToTheGeneralReader(_ text: String) throws {
        #expect(Self.readDirectly(Array(text.utf8)) == nil)
    }

    /// No JSON holds a NUL, and the connection relies on the reader to refuse one: a read of
    /// several calls is offered to it whole, its parameters running on into the next calls
    /// (`VarlinkConnection.answerAlone`, which does not search the read for a NUL).
    @Test func aNULAnywhereIsLeftToTheGeneralReader() {
        let text = #"{"action":"file.export","session":"0123456789abcdef0123456789abcdef","size":42,"target":"/home/ü/a b.txt"}"#
        let bytes = Array(text.utf8)
        #expect(Self.readDirectly(bytes) != nil)
        for offset in bytes.indices {
            var withNUL = bytes
            withNUL[offset] = 0
            #expect(Self.readDirectly(withNUL) == nil, "a NUL at \(offset)")
            withNUL.insert(0, at: offset)
            withNUL[offset + 1] = bytes[offset]
            #expect(Self.readDirectly(withNUL) == nil, "a NUL inserted at \(offset)")
        }
    }

    @Test func invalidUTF8InTheTargetIsLeftToTheGeneralReader() {
        let bytes = Array(#"{"session":"s","action":"launch","target":""#.utf8) + [0xED, 0xA0, 0x80] + Array(#""}"#.utf8)
        #expect(Self.readDirectly(bytes) == nil)
    }
}
