import Glibc
import JSONCore
import ProctorPolicy
import ProctorProtocol
import Varlink

/// A connection to proctord's `io.proctor.Admin` socket for one command, with every failure
/// already turned into a `CommandFailure`.
struct AdminClient {
    /// Where proctord listens when neither `--address` nor the environment says otherwise.
    static let defaultAddress = "/run/proctor/io.proctor.Admin"
    /// The environment variable naming the socket when `--address` is not given.
    static let addressVariable = "PROCTOR_ADMIN_SOCKET"

    static let addressOption = OptionSpec.value(
        "--address", "PATH",
        help: "Talk to proctord's Admin socket at PATH. Without it, $\(addressVariable) names the socket, "
            + "and without that, \(defaultAddress).")
    /// The exit statuses of a command that talks to proctord, in the order of their codes, for
    /// its manual: what each means for this command, where it says more than the default.
    static func exitStatuses(
        success: String = "proctord answered.", denied: String? = nil,
        invalidInput: String = "The command line is wrong.",
        unreachable: String = "proctord is not running at the address, or the exchange failed.",
        refused: String = "proctord refused, such as permission denied."
    ) -> [(ExitStatus, String)] {
        [(.success, success)] + (denied.map { [(.denied, $0)] } ?? [])
            + [(.invalidInput, invalidInput), (.daemonUnreachable, unreachable), (.daemonRefused, refused)]
    }

    /// The exit statuses of a command that only asks proctord something.
    static let questionExitStatuses = exitStatuses()

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

    /// Calls `method` of `io.proctor.Admin` and returns its reply.
    func call<Method: AdminMethod>(_ method: Method.Type, _ request: Method.Request) throws(CommandFailure)
        -> Answer<Method.Reply>
    {
        do {
            return Answer(json: .object(try client.call(Method.qualifiedName, request.fields)), method: Method.name,
                          address: address)
        } catch {
            throw Self.failure(error, address: address)
        }
    }

    func call<Method: AdminMethod>(_ method: Method.Type) throws(CommandFailure) -> Answer<Method.Reply>
        where Method.Request == NoFields
    {
        try call(method, NoFields())
    }

    /// Calls `method` with `more` and hands each reply to `body` as it arrives, until the
    /// stream ends or `body` returns false.
    func stream<Method: AdminMethod>(_ method: Method.Type, _ request: Method.Request,
                                        _ body: (Answer<Method.Reply>) throws(CommandFailure) -> Bool) throws(CommandFailure) {
        do {
            var replies = try client.callMore(Method.qualifiedName, request.fields)
            while let parameters = try replies.next() {
                guard try body(Answer(json: .object(parameters), method: Method.name, address: address)) else { return }
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
        case VarlinkClientError.systemCallFailed(_, let code) where code.rawValue == EACCES:
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

/// A reply from proctord: the JSON it came as (what `--json` prints, verbatim) and, read on
/// demand, the method's reply type. A field that is missing or of the wrong type is a
/// failure naming the field (exit 3: the reply makes no sense), so a daemon of another
/// version is reported rather than misprinted.
struct Answer<Message: ProtocolMessage> {
    let json: JSONValue
    /// The method that was called, naming the reply in messages: `Status`.
    let method: String
    let address: String

    func message() throws(CommandFailure) -> Message {
        do {
            return try Message(json.objectValue ?? [:])
        } catch {
            throw .daemonUnreachable(address: address, reason: "unexpected reply: \(method).\(error.field) \(error.reason)")
        }
    }

    /// Prints the reply for a command that only reports it: verbatim with `--json`, otherwise
    /// the lines `readable` makes of the message. The command succeeded.
    func print(_ arguments: ParsedArguments, on console: Console,
               _ readable: (Message) throws(CommandFailure) -> [String]) throws(CommandFailure) -> ExitStatus {
        let lines = arguments.has("--json") ? [json.serializedString()] : try readable(message())
        for line in lines { console.print(line) }
        return .success
    }
}
