import JSONCore
import Testing
@testable import Varlink

@Suite struct FrameDecoderTests {
    let calls = [
        VarlinkCall(method: "org.example.ping.Ping", parameters: ["text": "héllo"]),
        VarlinkCall(method: "org.example.ping.Stream", parameters: ["n": 3], more: true),
        VarlinkCall(method: "org.example.ping.Forget", oneway: true),
    ]

    var stream: [UInt8] { calls.flatMap { $0.encoded() } }

    func drain(_ decoder: inout VarlinkFrameDecoder) throws -> [VarlinkCall] {
        var out: [VarlinkCall] = []
        while let call = try decoder.nextCall() { out.append(call) }
        return out
    }

    @Test func encodedCallsDecodeBack() throws {
        var decoder = VarlinkFrameDecoder()
        decoder.append(stream)
        #expect(try drain(&decoder) == calls)
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test func everySplitPointOfTheStreamGivesTheSameCalls() throws {
        let bytes = stream
        for split in 0...bytes.count {
            var decoder = VarlinkFrameDecoder()
            decoder.append(bytes[0..<split])
            var decoded = try drain(&decoder)
            decoder.append(bytes[split...])
            decoded += try drain(&decoder)
            #expect(decoded == calls, "split at \(split)")
        }
    }

    @Test func byteByByteDelivery() throws {
        var decoder = VarlinkFrameDecoder()
        var decoded: [VarlinkCall] = []
        for byte in stream {
            decoder.append([byte])
            decoded += try drain(&decoder)
        }
        #expect(decoded == calls)
    }

    @Test func appendsFromReadBuffersAndNonContiguousCollections() throws {
        var decoder = VarlinkFrameDecoder()
        stream.withUnsafeBytes { decoder.append($0) }
        #expect(try drain(&decoder) == calls)
        decoder.append(calls.map { $0.encoded() }.joined())
        #expect(try drain(&decoder) == calls)
    }

    @Test func manyMessagesInOneReadAndCompaction() throws {
        var decoder = VarlinkFrameDecoder(maxMessageBytes: 256)
        let one = VarlinkCall(method: "a.b.C", parameters: ["x": 1]).encoded()
        for round in 0..<50 {
            decoder.append(Array(repeating: one, count: 200).joined())
            #expect(try drain(&decoder).count == 200, "round \(round)")
        }
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test func anIdleDecoderDropsALargeReadsBuffer() throws {
        var decoder = VarlinkFrameDecoder()
        decoder.append(Array(repeating: stream, count: 200).joined())
        #expect(try drain(&decoder).count == 600)
        #expect(decoder.bufferCapacity <= VarlinkFrameDecoder.idleCapacity)
    }

    @Test func messageAtTheLimitIsAccepted() throws {
        let message = VarlinkCall(method: "a.b.C").encoded()
        var decoder = VarlinkFrameDecoder(maxMessageBytes: message.count - 1)
        decoder.append(message)
        #expect(try decoder.nextCall()?.method == "a.b.C")
    }

    @Test func oversizeWithoutTerminatorFailsAndStaysFailed() throws {
        var decoder = VarlinkFrameDecoder(maxMessageBytes: 16)
        decoder.append(Array(#"{"method":"a.b"#.utf8))
        #expect(try decoder.nextCall() == nil)
        decoder.append(Array(#"Cdefgh"#.utf8))
        #expect(throws: VarlinkFrameError.messageTooLarge(limit: 16)) { try decoder.nextCall() }
        decoder.append([0])
        #expect(decoder.bufferedByteCount == 0)
        #expect(throws: VarlinkFrameError.messageTooLarge(limit: 16)) { try decoder.nextCall() }
    }

    @Test func oversizeWithTerminatorInTheSameRead() throws {
        var decoder = VarlinkFrameDecoder(maxMessageBytes: 8)
        decoder.append(VarlinkCall(method: "a.b.Long").encoded())
        #expect(throws: VarlinkFrameError.messageTooLarge(limit: 8)) { try decoder.nextCall() }
    }

    @Test func invalidUTF8InsideAndOutsideStrings() throws {
        for bytes: [UInt8] in [Array(#"{"method":""#.utf8) + [0xFF] + Array(#""}"#.utf8) + [0],
                               Array(#"{"method":"a.b.C"}"#.utf8) + [0xC3, 0] ] {
            var decoder = VarlinkFrameDecoder()
            decoder.append(bytes)
            #expect(throws: VarlinkFrameError.invalidUTF8) { try decoder.nextCall() }
        }
    }

    @Test func invalidJSON() throws {
        var decoder = VarlinkFrameDecoder()
        decoder.append(Array(#"{"method": "a.b.C",}"#.utf8) + [0])
        #expect {
            try decoder.nextCall()
        } throws: { error in
            guard case .invalidJSON(let parseError) = error as? VarlinkFrameError else { return false }
            return parseError.offset == 19
        }
    }

    @Test func nonObjectMissingMethodAndMistypedMembers() throws {
        let cases: [(String, VarlinkFrameError)] = [
            ("[1,2]", .notAnObject(found: "an array")),
            (#""text""#, .notAnObject(found: "a string")),
            (#"{"parameters":{}}"#, .missingMethod),
            (#"{"method":7}"#, .invalidField(name: "method", expected: "a string", found: "a number")),
            (#"{"method":"a.b.C","parameters":[]}"#, .invalidField(name: "parameters", expected: "an object", found: "an array")),
            (#"{"method":"a.b.C","more":"yes"}"#, .invalidField(name: "more", expected: "a boolean", found: "a string")),
            (#"{"method":"a.b.C","oneway":1}"#, .invalidField(name: "oneway", expected: "a boolean", found: "a number")),
        ]
        for (text, expected) in cases {
            var decoder = VarlinkFrameDecoder()
            decoder.append(Array(text.utf8) + [0])
            #expect(throws: expected, "\(text)") { try decoder.nextCall() }
        }
    }

    @Test func replyEncodingMatchesTheSpecShape() throws {
        let reply = VarlinkReply(parameters: ["n": 1], continues: true)
        #expect(String(decoding: reply.encoded(), as: UTF8.self) == #"{"continues":true,"parameters":{"n":1}}"# + "\0")
        let error = VarlinkReply(error: .invalidParameter("appId"))
        #expect(String(decoding: error.encoded(), as: UTF8.self)
            == #"{"error":"org.varlink.service.InvalidParameter","parameters":{"parameter":"appId"}}"# + "\0")
        var decoder = VarlinkFrameDecoder()
        decoder.append(reply.encoded() + error.encoded())
        #expect(try decoder.nextReply() == reply)
        #expect(try decoder.nextReply() == error)
        #expect(try decoder.nextReply() == nil)
    }

    @Test func callEncodingLeavesOutFalseFlags() {
        #expect(String(decoding: VarlinkCall(method: "a.b.C").encoded(), as: UTF8.self) == #"{"method":"a.b.C"}"# + "\0")
        #expect(String(decoding: VarlinkCall(method: "a.b.C", parameters: ["x": true], more: true).encoded(), as: UTF8.self)
            == #"{"method":"a.b.C","more":true,"parameters":{"x":true}}"# + "\0")
    }
}
