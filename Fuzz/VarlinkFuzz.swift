// libFuzzer target for the Varlink byte parsers: the frame decoder and connection state
// (bytes from any client) and the interface-definition parser. Not part of a SwiftPM
// target; `Fuzz/build.sh varlink` builds it (see docs/varlink.md).
// `Ping` is also a direct method (`VarlinkDirectMethod`, its `text` alone): every input is
// fed to a connection that answers it directly and to one that does not, which must write
// the same bytes and close alike.
import JSONCore
import Varlink

private let pingInterface = """
    interface org.example.fuzz
    type Mode (loud, quiet)
    method Ping(text: string, mode: ?Mode, tags: ?[]string, extra: ?object, counts: ?[string]int) -> (text: string)
    method Stream(count: int) -> (n: int)
    """

private func makeService() -> VarlinkService<Int> {
    let service = VarlinkService<Int>(vendor: "fuzz", product: "fuzz", version: "0", url: "")
    do {
        try service.addInterface(pingInterface, methods: [
            "Ping": VarlinkMethod { call, _, reply in reply.reply(["text": call.parameters["text"] ?? ""]) },
            "Stream": VarlinkMethod(requiresMore: true) { call, _, reply in
                // Any int may come, negative ones too: at most four replies, at least none.
                for n in 0..<min(max(call.parameters["count"]?.intValue ?? 0, 0), 4) { reply.send(["n": .number(n)]) }
                reply.reply(["n": 0])
            },
        ])
    } catch {
        fail("fuzz interface does not parse: \(error)")
    }
    service.addDirectMethod("org.example.fuzz.Ping", VarlinkDirectMethod(read: readPing) { text, _, _ in PingReply(text: text) })
    return service
}

/// `Ping`'s parameters when they are `text` alone, written plainly, as the direct way reads them.
private func readPing(_ parameters: UnsafeRawBufferPointer) -> String? {
    guard var object = JSONPlainObject(parameters), object.hasMember, let key = object.key(),
          JSONPlainObject.equal(key, "text"), let text = object.text(), !object.hasMember else { return nil }
    return text
}

private struct PingReply: VarlinkDirectReply {
    let text: String
    func writeParameters(to out: inout [UInt8]) {
        out.append(contentsOf: #"{"text":"#.utf8)
        JSONValue.writeString(text, to: &out)
        out.append(UInt8(ascii: "}"))
    }
}

/// Made once: a service holds no per-connection state, and parsing its interfaces for
/// every input would cost more than the input itself. libFuzzer calls from one thread.
nonisolated(unsafe) private let service = makeService()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let mode = bytes.first else { return 0 }
    let input = bytes.dropFirst()
    if mode & 1 == 0 {
        // The first byte also picks where reads split, so partial messages are exercised.
        let chunk = Int(mode >> 1) + 1
        let connection = VarlinkConnection(service: service, context: 0, maxMessageBytes: 4096)
        let general = VarlinkConnection(service: service, context: 0, maxMessageBytes: 4096)
        general.answersDirectly = false
        var replyDecoder = VarlinkFrameDecoder()
        var start = input.startIndex
        while start < input.endIndex {
            let end = min(start + chunk, input.endIndex)
            let output = connection.receive(input[start..<end])
            let generalOutput = general.receive(input[start..<end])
            check(output == generalOutput, "answered directly: \(output); the general way: \(generalOutput)")
            replyDecoder.append(output.bytes)
            // Every byte the connection sends must be a valid reply.
            do {
                while try replyDecoder.nextReply() != nil {}
            } catch {
                fail("connection produced an invalid reply: \(error)")
            }
            if output.close != nil { break }
            start = end
        }
    } else {
        if let text = String(validating: input, as: UTF8.self),
           let description = try? VarlinkInterfaceDescription(parsing: text) {
            // A description that parsed must check any parameters without trapping.
            for method in description.methods.values {
                _ = description.invalidParameter(in: ["a": 1, "b": ["c": [true, nil]]], of: method)
            }
        }
    }
    return 0
}
