import JSONCore
import ProctorProtocol

/// `proctorctl notify APP JSON`: pushes an MDM command to an app's sessions.
enum NotifyCommand {
    static let verb = Verb(
        words: ["notify"],
        summary: "push a JSON command to an app's sessions",
        argumentsSynopsis: "APP JSON",
        positionalCount: 2...2,
        options: AdminClient.options(),
        description: [
            "Asks proctord (io.proctor.Admin.Notify) to push the JSON object JSON to every session of APP subscribed "
                + "to its changes, where it arrives as didReceiveRemoteNotification. What the object means is up to the "
                + "app. Nothing is stored: a session that is not connected now does not receive it. Prints how many "
                + "sessions received it; none is not an error.",
        ],
        exitStatuses: [
            (.success, "The push was handed to every subscribed session (possibly none)."),
            (.invalidInput, "JSON is not a JSON object, or the command line is wrong."),
            (.daemonUnreachable, "proctord is not running at the address, or the exchange failed."),
            (.daemonRefused, "proctord refused: permission denied, or no such app."),
        ],
        examples: [
            ("proctorctl notify com.example.mail '{\"command\": \"sync\"}'", "Ask the mail app to sync now."),
        ],
        run: run)

    static func run(_ arguments: ParsedArguments, context: CommandContext) throws(CommandFailure) -> ExitStatus {
        let app = arguments.positionals[0]
        let payload: JSONValue
        do {
            payload = try JSONParser.parse(arguments.positionals[1])
        } catch {
            throw .usage(UsageError("the payload JSON is not valid JSON: \(error)"))
        }
        guard payload.objectValue != nil else {
            throw .usage(UsageError("the payload JSON must be a JSON object, found \(payload.typeDescription)"))
        }
        let answer = try AdminClient(arguments, context: context)
            .call(Admin.Notify.self, Admin.Notify.Request(appId: app, payload: payload.objectValue ?? [:]))
        if arguments.has("--json") {
            context.console.print(answer.json.serializedString())
            return .success
        }
        let delivered = try answer.message().delivered
        context.console.print(delivered == 0
            ? "no session of \(app) is subscribed: nobody received it"
            : "delivered to \(delivered) session\(delivered == 1 ? "" : "s") of \(app)")
        return .success
    }
}
