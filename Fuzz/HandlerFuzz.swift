// libFuzzer target for proctord's Agent and Admin method handlers: calls go through the
// daemon's real services — Varlink framing, the typed request decoding of ProctorProtocol,
// the handlers, policy updates, the SQLite state store — in this process, without sockets
// (`SocketlessDaemon`), on a state directory in /dev/shm when there is one.
//
// The input is split at NUL bytes into calls (the first 32 are sent). A call's first byte picks:
//   bits 0-4  the method, an index into `methods` (one past the end and above: the rest of
//             the chunk is sent as it is, a whole message, so unknown methods and malformed
//             calls come too)
//   bit 5     "more", bit 6 "oneway"
//   bit 7     the other connection: an Agent method on the admin socket, an Admin method
//             from a client that is neither root nor in the admin group
// and the rest is the call's parameters, JSON text sent as it is, in which `$s` stands for
// the session the last Register returned, `$d` for the last wipe directive seen and `$v`
// for the last policy version applied. Each call is answered (and any policy change it
// started finished) before the next is sent; then the clients hang up.
// Properties:
// - every reply answers a call that wanted one, in order: a reply of the method's declared
//   shape (checked against the interface file and by the typed reply decoding), or an error
//   the interface (or org.varlink.service) declares, with the declared parameters; only a
//   `more` call gets replies that continue;
// - the policy in force is the one the last acknowledged change put in force (ApplyPolicy,
//   RollbackPolicy, Reload), or the one before when nothing changed it;
// - every 50 inputs the daemon stops and starts again on its state: the store opens and
//   the policy in force is the same (no acknowledged change lost); every other restart the
//   state starts afresh instead (an input costs twice as much after 200 inputs' state as
//   after 20: replies such as GetApp's list of wipe records grow). A crash that needs state
//   from earlier inputs therefore replays only with those inputs (`-runs` over the corpus,
//   not the one file).
// Policy changes are read and compiled on this thread (`SocketlessDaemon`), not a worker's.
// Not part of a SwiftPM target; `Fuzz/build.sh handlers` builds it (Fuzz/README.md).
import Glibc
import JSONCore
import LinuxIO
import ProctorDaemon
import ProctorProtocol
import Varlink

/// The methods a call's first byte names, by `byte & 31`; every method of both interfaces.
private let methods: [any ProtocolMethod.Type] = [
    Agent.Register.self, Agent.Decide.self, Agent.ReportEvent.self, Agent.Subscribe.self, Agent.AcknowledgeWipe.self,
    Agent.ReportFeedback.self, Agent.GetDataKey.self,
    Admin.Status.self, Admin.ListApps.self, Admin.GetApp.self, Admin.GetPolicy.self, Admin.ValidatePolicy.self,
    Admin.ApplyPolicy.self, Admin.ApplyBundle.self, Admin.Reload.self, Admin.Decide.self, Admin.Wipe.self, Admin.Notify.self,
    Admin.PolicyHistory.self, Admin.RollbackPolicy.self, Admin.Events.self, Admin.EventHistory.self,
    Agent.GetInfo.self,  // appended, so that the corpus keeps naming the methods it named
]
private let methodsByName = Dictionary(uniqueKeysWithValues: methods.map { ($0.qualifiedName, $0) })
/// Methods after which the policy in force may differ.
private let policyChanges: Set = [Admin.ApplyPolicy.qualifiedName, Admin.RollbackPolicy.qualifiedName,
                                  Admin.Reload.qualifiedName, Admin.ApplyBundle.qualifiedName]
private let maxCalls = 32
private let inputsPerRestart = 50
private let restartsPerFreshState = 2

/// The interfaces replies are checked against, by name.
private let interfaces: [String: VarlinkInterfaceDescription] = {
    var interfaces: [String: VarlinkInterfaceDescription] = [:]
    do {
        for name in ProtocolInterfaces.names {
            interfaces[name] = try VarlinkInterfaceDescription(parsing: ProtocolInterfaces.text(of: name))
        }
        interfaces["org.varlink.service"] = try VarlinkInterfaceDescription(parsing: VarlinkServiceInterface.text)
    } catch {
        fail("an interface file does not parse: \(error)")
    }
    for (name, interface) in interfaces where name != "org.varlink.service" {
        for method in interface.methods.keys {
            check(methodsByName["\(name).\(method)"] != nil, "\(name).\(method) is missing from the fuzzer's method table")
        }
    }
    return interfaces
}()

/// The policy the daemon starts with: apps in each state, a wipe on violation, file rules.
private let policyFiles = [
    "00-defaults.json": """
        {"schema": 1, "version": "fuzz-1",
         "defaults": {"dlp": {"clipboard": {"level": "managed", "charLimit": 0}, "print": "allow",
                              "fileExport": {"deny": ["/tmp/**"]}, "notifications": "allow"},
                      "compliance": {"onViolation": "block", "offlineGraceSeconds": 86400}}}
        """,
    "10-apps.json": """
        {"schema": 1, "apps": {
          "io.proctor.fuzz.notes": {"state": "authorized", "match": {"executable": "/usr/bin/notes", "users": ["*"]},
            "config": {"serverURL": "https://notes.example.com", "syncDays": 14},
            "dlp": {"clipboard": {"level": "managed-paste-in", "charLimit": 40}, "print": "block",
                    "share": {"send": "managed", "receive": "any", "exempt": ["com.example.*"]},
                    "fileExport": {"allow": ["/home/*/Work/**"], "deny": ["/home/*/Work/Public/**"], "enforcement": "kernel"}},
            "compliance": {"minVersion": "1.2.0", "onViolation": "warn", "offlineWipeSeconds": 172800}},
          "io.proctor.fuzz.mail": {"state": "authorized", "match": {"executable": "/usr/bin/mail"},
            "compliance": {"minVersion": "3.0.0-rc.2", "onViolation": "wipe", "offlineGraceSeconds": 0}},
          "io.proctor.fuzz.chat": {"state": "blocked", "match": {"executable": "/usr/bin/chat"}},
          "io.proctor.fuzz.old": {"state": "retired", "match": {"executable": "/usr/bin/old"}}}}
        """,
]

/// A client of the daemon: its connection, the calls still to be answered, in order, and
/// the bytes of replies not yet decoded.
private final class Client {
    enum Expected {
        /// A call that wants replies.
        case call(VarlinkCall)
        /// A message that is not a valid call: at most an InvalidParameter error, then the
        /// connection closes.
        case invalid
    }

    let connection: SocketlessDaemon.Connection
    var expected: [Expected] = []
    var replies = VarlinkFrameDecoder()
    var isClosed = false

    init(_ connection: SocketlessDaemon.Connection) { self.connection = connection }
}

/// What calls may refer to by `$s`, `$d` and `$v`: learnt from replies.
private struct Handles {
    var session = ""
    var directive = ""
    var version = ""
}

private final class Harness {
    let directory: String
    private(set) var daemon: SocketlessDaemon
    /// The SHA-256 the policy in force must have; nil after a oneway policy change, whose
    /// outcome nobody was told.
    var expectedPolicy: String?
    var inputs = 0
    var restarts = 0

    init() {
        let parent = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
        do {
            directory = try Directory.makeTemporary(prefix: "proctor-fuzz-handlers", in: parent)
        } catch {
            fail("cannot create a directory in \(parent): \(error)")
        }
        mkdir(directory + "/config", 0o700)
        mkdir(directory + "/config/policy.d", 0o700)
        for (name, text) in policyFiles {
            let file = fopen(directory + "/config/policy.d/" + name, "w")
            check(file != nil && fputs(text, file) >= 0 && fclose(file) == 0, "cannot write the policy")
        }
        daemon = Self.start(directory)
        expectedPolicy = daemon.policyInForce.sha256
        atexit { removeTree(harness.directory) }
    }

    static func start(_ directory: String) -> SocketlessDaemon {
        do {
            return try SocketlessDaemon(directory: directory)
        } catch {
            fail("the daemon does not start on its own state: \(error)")
        }
    }

    /// Runs the daemon's loop until it is idle (`stopping`: then stops it); a loop that fails
    /// is a finding.
    func settle(stopping: Bool = false) {
        do {
            if stopping { try daemon.stop() } else { try daemon.settle() }
        } catch {
            fail("the event loop failed: \(error)")
        }
    }

    /// Stops the daemon and starts it again on the same state, which must hold the policy
    /// that was in force; every `restartsPerFreshState` times, on a fresh state instead.
    func restart() {
        let before = daemon.policyInForce
        settle(stopping: true)
        restarts += 1
        if restarts % restartsPerFreshState == 0 {
            let state = directory + "/state"
            for name in (try? Directory.entryNames(state)) ?? [] { unlink(state + "/" + name) }
            daemon = Self.start(directory)
            expectedPolicy = daemon.policyInForce.sha256
            return
        }
        daemon = Self.start(directory)
        let after = daemon.policyInForce
        check(after == before, "a restart put policy \(after) in force, not \(before), which was")
    }

    func run(_ chunks: [Slice<UnsafeBufferPointer<UInt8>>]) {
        let agent = Client(daemon.connect(to: .agent))
        let admin = Client(daemon.connect(to: .admin))
        let stranger = Client(daemon.connect(to: .admin, administrator: false))
        var handles = Handles()
        for chunk in chunks {
            let selector = chunk[chunk.startIndex]
            let index = Int(selector & 31), other = selector & 0x80 != 0
            let client: Client
            let message: [UInt8]
            if index < methods.count {
                let method = methods[index]
                client = method.interface == Agent.interface ? (other ? admin : agent) : (other ? stranger : admin)
                message = call(method.qualifiedName, more: selector & 0x20 != 0, oneway: selector & 0x40 != 0,
                               parameters: substitute(chunk.dropFirst(), handles))
            } else {
                client = other ? admin : agent
                message = Array(chunk.dropFirst()) + [0]
            }
            guard !client.isClosed else { continue }
            send(message, to: client)
            settle()
            for client in [agent, admin, stranger] { receive(client, &handles) }
        }
        for client in [agent, admin, stranger] where !client.isClosed { client.connection.close() }
        settle()
        if let expectedPolicy {
            check(daemon.policyInForce.sha256 == expectedPolicy,
                  "policy \(daemon.policyInForce) is in force, but the last change acknowledged put \(expectedPolicy) in force")
        }
        inputs += 1
        if inputs % inputsPerRestart == 0 { restart() }
    }

    private func send(_ message: [UInt8], to client: Client) {
        var decoder = VarlinkFrameDecoder(maxMessageBytes: Int.max)
        decoder.append(message)
        do {
            if let call = try decoder.nextCall() {
                if !call.oneway { client.expected.append(.call(call)) }
                if policyChanges.contains(call.method), call.oneway { expectedPolicy = nil }
            }
        } catch {
            client.expected.append(.invalid)
        }
        client.connection.send(message)
    }

    /// Checks every reply the client got since the last call, and learns handles from them.
    private func receive(_ client: Client, _ handles: inout Handles) {
        let output = client.connection.takeOutput()
        client.replies.append(output.bytes)
        while true {
            let reply: VarlinkReply
            do {
                guard let next = try client.replies.nextReply() else { break }
                reply = next
            } catch {
                fail("the daemon wrote something that is not a reply: \(error)")
            }
            guard let expected = client.expected.first else { fail("a reply no call asked for: \(reply)") }
            switch expected {
            case .invalid:
                check(reply.error == "org.varlink.service.InvalidParameter" && !reply.continues,
                      "a message that is not a call got \(reply)")
                check(output.close != nil, "the connection stays open after a message that is not a call")
            case .call(let call):
                checkReply(reply, to: call)
                learn(from: reply, to: call, &handles)
            }
            if !reply.continues { client.expected.removeFirst() }
        }
        if output.close != nil {
            client.isClosed = true
            client.connection.close()
        }
    }

    private func learn(from reply: VarlinkReply, to call: VarlinkCall, _ handles: inout Handles) {
        let parameters = reply.parameters
        if reply.error == nil, policyChanges.contains(call.method) {
            // ApplyPolicy, RollbackPolicy and ApplyBundle name the policy now in force;
            // Reload's reply carries it in `policy`.
            let applied = parameters["policy"]?.objectValue ?? parameters
            expectedPolicy = applied["sha256"]?.stringValue
            if let version = applied["version"]?.stringValue { handles.version = version }
        }
        if let session = parameters["session"]?.stringValue, reply.error == nil { handles.session = session }
        if let directive = parameters["directiveId"]?.stringValue ?? parameters["directives"]?.arrayValue?.last?["id"]?.stringValue {
            handles.directive = directive
        }
    }
}

/// A call's message: `{"method": …, "more": true, "oneway": true, "parameters": TEXT}`, with
/// TEXT as given (no parameters member when empty), NUL-terminated.
private func call(_ method: String, more: Bool, oneway: Bool, parameters: [UInt8]) -> [UInt8] {
    var message = Array("{\"method\":\"\(method)\"".utf8)
    if more { message += Array(",\"more\":true".utf8) }
    if oneway { message += Array(",\"oneway\":true".utf8) }
    if !parameters.isEmpty { message += Array(",\"parameters\":".utf8) + parameters }
    return message + Array("}".utf8) + [0]
}

/// `text` with `$s`, `$d` and `$v` replaced by the handles.
private func substitute(_ text: Slice<UnsafeBufferPointer<UInt8>>, _ handles: Handles) -> [UInt8] {
    var result: [UInt8] = []
    result.reserveCapacity(text.count)
    var index = text.startIndex
    while index < text.endIndex {
        let byte = text[index]
        if byte == UInt8(ascii: "$"), index + 1 < text.endIndex {
            let replacement: String? = switch text[index + 1] {
            case UInt8(ascii: "s"): handles.session
            case UInt8(ascii: "d"): handles.directive
            case UInt8(ascii: "v"): handles.version
            default: nil
            }
            if let replacement {
                result += replacement.utf8
                index += 2
                continue
            }
        }
        result.append(byte)
        index += 1
    }
    return result
}

/// A reply to `call` must be one the interface declares: the method's reply, or an error of
/// its interface or of org.varlink.service, with the declared parameters.
private func checkReply(_ reply: VarlinkReply, to call: VarlinkCall) {
    let (interfaceName, methodName) = split(call.method)
    check(!reply.continues || call.more, "\(call.method) without more got a reply that continues: \(reply)")
    if let error = reply.error {
        let (errorInterface, errorName) = split(error)
        check(errorInterface == interfaceName || errorInterface == "org.varlink.service",
              "\(call.method) answered with another interface's error: \(reply)")
        guard let fields = interfaces[errorInterface]?.errors[errorName] else {
            fail("\(call.method) answered with an undeclared error: \(reply)")
        }
        if let invalid = interfaces[errorInterface]?.invalidMember(in: reply.parameters, of: fields) {
            fail("\(call.method) answered with error \(error) whose parameter \(invalid) is not as declared: \(reply)")
        }
        check(!reply.continues, "an error reply continues: \(reply)")
        return
    }
    guard let interface = interfaces[interfaceName], let signature = interface.methods[methodName] else {
        fail("a call of \(call.method), which no interface declares, was answered: \(reply)")
    }
    if let invalid = interface.invalidMember(in: reply.parameters, of: signature.output) {
        fail("\(call.method) replied with \(invalid) not as declared: \(reply)")
    }
    if let method = methodsByName[call.method] { checkTyped(method, reply) }
}

private func checkTyped<Method: ProtocolMethod>(_ method: Method.Type, _ reply: VarlinkReply) {
    do {
        _ = try Method.Reply(reply.parameters)
    } catch {
        fail("\(Method.qualifiedName) replied with a message its Reply type cannot read (\(error)): \(reply)")
    }
}

/// Removes `path` and everything under it: the fuzzer's own directory, which holds only
/// files and directories.
private func removeTree(_ path: String) {
    guard let names = try? Directory.entryNames(path) else {
        unlink(path)
        return
    }
    for name in names { removeTree(path + "/" + name) }
    rmdir(path)
}

/// `a.b.C` → (`a.b`, `C`).
private func split(_ qualifiedName: String) -> (String, String) {
    guard let dot = qualifiedName.lastIndex(of: ".") else { return ("", qualifiedName) }
    return (String(qualifiedName[..<dot]), String(qualifiedName[qualifiedName.index(after: dot)...]))
}

/// Made once (see the header): starting a daemon costs far more than an input.
nonisolated(unsafe) private let harness = Harness()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let chunks = bytes.split(separator: 0, omittingEmptySubsequences: true).prefix(maxCalls)
    _ = interfaces
    harness.run(Array(chunks))
    return 0
}
