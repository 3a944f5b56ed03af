import Foundation
import Glibc
import JSONCore
import LinuxIO
import Synchronization
import Testing
import TestSupport
import Varlink

/// A stand-in for proctord's Admin socket: the real `io.proctor.Admin` interface file served
/// by the Varlink library's `VarlinkService` on a real Unix socket, answering canned
/// replies. Every canned reply and error is checked against the interface's output types
/// before it is sent, so the tests cannot drift from the contract. It records the calls it
/// received. One connection at a time, served on a thread of its own.
final class FakeAdminServer: @unchecked Sendable {
    /// Answers one call's parameters with a reply's parameters, or throws the error reply.
    typealias Handler = @Sendable ([String: JSONValue]) throws(VarlinkError) -> [String: JSONValue]

    let directory: TemporaryDirectory
    let path: String
    private let listener: FileDescriptor
    private let stopped = DispatchSemaphore(value: 0)
    private let receivedCalls = Mutex<[VarlinkCall]>([])
    private let violations = Mutex<[String]>([])

    /// `replies` by method name (`Status`); `eventBatches[i]` is what the i-th `Events`
    /// call gets: its events, after which the connection is closed when more batches
    /// follow (proctord going away) and left open otherwise. With `checkingReplies` false
    /// replies that break the interface are sent as they are (to test how they are met).
    init(replies: [String: Handler], eventBatches: [[[String: JSONValue]]] = [], checkingReplies: Bool = true) throws {
        directory = try TemporaryDirectory()
        path = directory.path + "/io.proctor.Admin"
        listener = try UnixSocket.listen(path: path, mode: 0o600)
        try listener.setNonBlocking(false)
        let listener = listener
        let schema = checkingReplies ? try AdminSchema() : nil
        Thread.detachNewThread { [self] in
            let service = makeService(replies: replies, eventBatches: eventBatches, schema: schema)
            while let connection = try? UnixSocket.accept(on: listener) {
                serve(connection, service: service)
                try? connection.close()
            }
            stopped.signal()
        }
    }

    /// The calls received so far, in order.
    var calls: [VarlinkCall] { receivedCalls.withLock { $0 } }

    /// Stops accepting, removes the socket's directory, and records an issue for every
    /// canned reply that did not match the interface.
    func stop(sourceLocation: Testing.SourceLocation = #_sourceLocation) {
        _ = shutdown(listener.rawValue, Int32(SHUT_RDWR))
        stopped.wait()
        try? listener.close()
        directory.remove()
        for violation in violations.withLock({ $0 }) { Issue.record(Comment(rawValue: violation), sourceLocation: sourceLocation) }
    }

    /// What a handler may change about its connection.
    final class ConnectionControl {
        var hangUpAfterOutput = false
    }

    private func makeService(replies: [String: Handler], eventBatches: [[[String: JSONValue]]],
                             schema: AdminSchema?) -> VarlinkService<ConnectionControl> {
        let service = VarlinkService<ConnectionControl>(vendor: "Proctor tests", product: "fake proctord", version: "0",
                                                        url: "https://example.invalid")
        var methods: [String: VarlinkMethod<ConnectionControl>] = [:]
        for (name, handler) in replies {
            methods[name] = VarlinkMethod { [self] call, _, reply throws(VarlinkError) in
                receivedCalls.withLock { $0.append(call) }
                do throws(VarlinkError) {
                    let parameters = try handler(call.parameters)
                    check(schema?.violation(method: name, reply: parameters))
                    reply.reply(parameters)
                } catch {
                    check(schema?.violation(error: error))
                    throw error
                }
            }
        }
        let batches = Mutex(eventBatches)
        methods["Events"] = VarlinkMethod(requiresMore: true) { [self] call, control, reply in
            receivedCalls.withLock { $0.append(call) }
            let (events, more) = batches.withLock { batches -> ([[String: JSONValue]], Bool) in
                guard !batches.isEmpty else { return ([], false) }
                return (batches.removeFirst(), !batches.isEmpty)
            }
            for event in events {
                check(schema?.violation(method: "Events", reply: ["event": .object(event)]))
                reply.send(["event": .object(event)])
            }
            control.hangUpAfterOutput = more
        }
        do {
            try service.addInterface(try String(contentsOf: AdminSchema.interfaceFile, encoding: .utf8), methods: methods)
        } catch {
            check("io.proctor.Admin could not be served: \(error)")
        }
        return service
    }

    private func check(_ violation: String?) {
        if let violation { violations.withLock { $0.append(violation) } }
    }

    private func serve(_ socket: FileDescriptor, service: VarlinkService<ConnectionControl>) {
        try? socket.setNonBlocking(false)
        let control = ConnectionControl()
        let connection = VarlinkConnection(service: service, context: control)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count: Int
            do {
                count = try buffer.withUnsafeMutableBytes { bytes throws(Errno) in try socket.read(into: bytes) }
            } catch {
                break
            }
            if count == 0 { break }
            let output = connection.receive(buffer[0..<count])
            try? socket.writeAll(output.bytes)
            if output.close != nil || control.hangUpAfterOutput { break }
        }
        connection.closed()
    }
}

/// The output side of `io.proctor.Admin`: each method's reply and each error's parameters
/// checked with the Varlink library's own type checker. The interface text is mirrored —
/// every method's output becomes its input, every error becomes a method `Error<Name>` —
/// so the checker the service applies to calls applies to replies.
struct AdminSchema {
    static let interfaceFile = repositoryRoot.appendingPathComponent("Sources/ProctorProtocol/Interfaces/io.proctor.Admin.varlink")

    private let mirror: VarlinkInterfaceDescription

    init() throws {
        mirror = try VarlinkInterfaceDescription(parsing: Self.mirrored(try String(contentsOf: Self.interfaceFile, encoding: .utf8)))
    }

    func violation(method: String, reply: [String: JSONValue]) -> String? {
        guard let signature = mirror.methods[method] else { return "io.proctor.Admin has no method \(method)" }
        return mirror.invalidParameter(in: reply, of: signature).map {
            "the canned reply of \(method) does not match the interface at \"\($0)\": \(JSONValue.object(reply).serializedString())"
        }
    }

    func violation(error: VarlinkError) -> String? {
        guard error.interfaceName == "io.proctor.Admin" else { return nil }
        let name = String(error.name.split(separator: ".").last ?? "")
        guard let signature = mirror.methods["Error" + name] else { return "io.proctor.Admin has no error \(name)" }
        return mirror.invalidParameter(in: error.parameters, of: signature).map {
            "the canned error \(error.name) does not match the interface at \"\($0)\""
        }
    }

    static func mirrored(_ text: String) -> String {
        let characters = Array(text)
        func matchingParenthesis(from open: Int) -> Int {
            var depth = 0
            for index in open..<characters.count {
                if characters[index] == "(" { depth += 1 }
                if characters[index] == ")" { depth -= 1; if depth == 0 { return index } }
            }
            return characters.count - 1
        }
        func starts(_ keyword: String, at index: Int) -> Bool {
            (index == 0 || characters[index - 1] == "\n") && characters[index...].starts(with: keyword)
        }
        var mirrored = ""
        var errorMethods = ""
        var index = 0
        while index < characters.count {
            if starts("method ", at: index), let open = characters[index...].firstIndex(of: "(") {
                let name = String(characters[(index + 7)..<open]).trimmingCharacters(in: .whitespaces)
                let inputEnd = matchingParenthesis(from: open)
                let outputStart = characters[inputEnd...].firstIndex(of: "(") ?? inputEnd
                let outputEnd = matchingParenthesis(from: outputStart)
                mirrored += "method \(name)" + String(characters[outputStart...outputEnd]) + " -> ()"
                index = outputEnd + 1
            } else if starts("error ", at: index), let open = characters[index...].firstIndex(of: "(") {
                let name = String(characters[(index + 6)..<open]).trimmingCharacters(in: .whitespaces)
                let end = matchingParenthesis(from: open)
                errorMethods += "\nmethod Error\(name)" + String(characters[open...end]) + " -> ()\n"
                mirrored += String(characters[index...end])
                index = end + 1
            } else {
                mirrored.append(characters[index])
                index += 1
            }
        }
        return mirrored + errorMethods
    }
}
