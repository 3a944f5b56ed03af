import Glibc
import JSONCore
import ProctorPolicy
import Varlink

/// A connection to proctord's `io.proctor.Admin` socket for one command, with every failure
/// already turned into a `CommandFailure`.
struct AdminClient {
    /// Where proctord listens when neither `--address` nor the environment says otherwise.
    static let defaultAddress = "/run/proctor/io.proctor.Admin"
    /// The environment variable naming the socket when `--address` is not given.
    static let addressVariable = "PROCTOR_ADMIN_SOCKET"
    static let interface = "io.proctor.Admin"

    static let addressOption = OptionSpec.value(
        "--address", "PATH",
        help: "Talk to proctord's Admin socket at PATH. Without it, $\(addressVariable) names the socket, "
            + "and without that, \(defaultAddress).")
    /// The options every command that talks to proctord takes; `jsonOutput` says what
    /// `--json` prints.
    static func options(jsonOutput: String = "proctord's reply as one JSON object") -> [OptionSpec] {
        [addressOption, .flag("--json", help: "Print \(jsonOutput) on standard output instead of the readable form. "
            + "When proctord refuses, print {\"error\": NAME, \"parameters\": {...}} there instead.")]
    }

    /// The socket the command line and environment name.
    static func address(_ arguments: ParsedArguments, environment: [String: String]) -> String {
        if let given = arguments.value("--address") { return given }
        if let named = environment[addressVariable], !named.isEmpty { return named }
        return defaultAddress
    }

    let address: String
    private let client: VarlinkClient

    /// Connects to the Admin socket. `timeout` bounds each wait for a reply (nil: wait as
    /// long as it takes, for event streams).
    init(_ arguments: ParsedArguments, context: CommandContext, timeout: Duration? = .seconds(60)) throws(CommandFailure) {
        let address = Self.address(arguments, environment: context.environment)
        do {
            client = try VarlinkClient(path: address, timeout: timeout, maxMessageBytes: PolicyLimits.maxReplyBytes)
        } catch {
            throw Self.failure(error, address: address)
        }
        self.address = address
    }

    /// Calls `io.proctor.Admin.<method>` and returns its reply.
    func call(_ method: String, _ parameters: [String: JSONValue] = [:]) throws(CommandFailure) -> Reply {
        do {
            return Reply(value: .object(try client.call("\(Self.interface).\(method)", parameters)), path: method,
                         address: address)
        } catch {
            throw Self.failure(error, address: address)
        }
    }

    /// Calls `io.proctor.Admin.<method>` with `more` and hands each reply to `body` as it
    /// arrives, until the stream ends or `body` returns false.
    func stream(_ method: String, _ parameters: [String: JSONValue] = [:],
                _ body: (Reply) throws(CommandFailure) -> Bool) throws(CommandFailure) {
        do {
            var replies = try client.callMore("\(Self.interface).\(method)", parameters)
            while let parameters = try replies.next() {
                guard try body(Reply(value: .object(parameters), path: method, address: address)) else { return }
            }
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw Self.failure(error, address: address)
        }
    }

    static func failure(_ error: any Error, address: String) -> CommandFailure {
        switch error {
        case let refusal as VarlinkError:
            return .daemonRefused(refusal)
        case VarlinkClientError.notListening:
            return .daemonUnreachable(address: address, reason: nil)
        case VarlinkClientError.pathTooLong:
            return .invalidInput(["proctorctl: the socket path \(address) is too long for a Unix socket"])
        case VarlinkClientError.systemCallFailed(_, let code) where code == EACCES:
            // The socket's mode refused this user: the same refusal (exit 4, the same words
            // and JSON) as proctord's own per-call check gives when the mode lets one through.
            return .daemonRefused(.permissionDenied)
        case let clientError as VarlinkClientError:
            return .daemonUnreachable(address: address, reason: clientError.description)
        default:
            return .daemonUnreachable(address: address, reason: "\(error)")
        }
    }
}

/// A reply from proctord, or a part of one, read field by field. A field that is missing or
/// of the wrong type is a failure naming the field (exit 3: the reply makes no sense), so a
/// daemon of another version is reported rather than misprinted.
struct Reply {
    let value: JSONValue
    /// Where `value` sits in the reply, for messages: `Status.policy`.
    let path: String
    let address: String

    private func field(_ key: String) -> JSONValue? {
        guard let found = value[key], !found.isNull else { return nil }
        return found
    }

    private func wrongShape(_ key: String, expected: String) -> CommandFailure {
        let found = value[key].map { "is \($0.typeDescription)" } ?? "is missing"
        return .daemonUnreachable(address: address, reason: "unexpected reply: \(path).\(key) \(found), expected \(expected)")
    }

    func string(_ key: String) throws(CommandFailure) -> String {
        guard let text = field(key)?.stringValue else { throw wrongShape(key, expected: "a string") }
        return text
    }

    func optionalString(_ key: String) throws(CommandFailure) -> String? {
        guard let found = field(key) else { return nil }
        guard let text = found.stringValue else { throw wrongShape(key, expected: "a string or null") }
        return text
    }

    func int(_ key: String) throws(CommandFailure) -> Int {
        guard let number = field(key)?.intValue else { throw wrongShape(key, expected: "an integer") }
        return number
    }

    func optionalInt(_ key: String) throws(CommandFailure) -> Int? {
        guard let found = field(key) else { return nil }
        guard let number = found.intValue else { throw wrongShape(key, expected: "an integer or null") }
        return number
    }

    func double(_ key: String) throws(CommandFailure) -> Double {
        guard let number = field(key)?.doubleValue else { throw wrongShape(key, expected: "a number") }
        return number
    }

    func bool(_ key: String) throws(CommandFailure) -> Bool {
        guard let flag = field(key)?.boolValue else { throw wrongShape(key, expected: "a boolean") }
        return flag
    }

    /// The object at `key` as a reply of its own.
    func object(_ key: String) throws(CommandFailure) -> Reply {
        guard let found = field(key), found.objectValue != nil else { throw wrongShape(key, expected: "an object") }
        return Reply(value: found, path: "\(path).\(key)", address: address)
    }

    func optionalObject(_ key: String) throws(CommandFailure) -> Reply? {
        guard field(key) != nil else { return nil }
        return try object(key)
    }

    /// The elements of the array at `key`, each as a reply of its own.
    func array(_ key: String) throws(CommandFailure) -> [Reply] {
        guard let elements = field(key)?.arrayValue else { throw wrongShape(key, expected: "an array") }
        return elements.enumerated().map { Reply(value: $1, path: "\(path).\(key)[\($0)]", address: address) }
    }

    func strings(_ key: String) throws(CommandFailure) -> [String] {
        try array(key).map { element throws(CommandFailure) in
            guard let text = element.value.stringValue else {
                throw .daemonUnreachable(address: address, reason: "unexpected reply: \(element.path) is "
                    + "\(element.value.typeDescription), expected a string")
            }
            return text
        }
    }
}
