import ProctorProtocol

/// `proctorctl wipe APP`: orders a wipe of an app's managed data.
enum WipeCommand {
    static let verb = Verb(
        words: ["wipe"],
        summary: "order a wipe of an app's managed data",
        argumentsSynopsis: "APP",
        positionalCount: 1...1,
        options: AdminClient.options(),
        description: [
            "Asks proctord (io.proctor.Admin.Wipe) to order the app APP to delete its managed data. The directive is "
                + "stored durably and delivered at once to every connected session of APP, otherwise at its next "
                + "registration; the app acknowledges it when done. Prints the directive's id and how many sessions "
                + "received it now; 'proctorctl app APP' shows how far it got.",
        ],
        exitStatuses: AdminClient.exitStatuses(
            success: "The wipe is ordered.",
            refused: "proctord refused: permission denied, no such app, or a storage failure."),
        examples: [
            ("proctorctl wipe com.example.mail", "Wipe the mail app's managed data."),
            ("proctorctl wipe com.example.mail --json | jq -r .directiveId", "Print the directive's id."),
        ],
        run: run)

    static func run(_ arguments: ParsedArguments, context: CommandContext) throws(CommandFailure) -> ExitStatus {
        let app = arguments.positionals[0]
        return try AdminClient(arguments, context: context).call(Admin.Wipe.self, Admin.AppRequest(appId: app))
            .print(arguments, on: context.console) { reply in
                let delivered = reply.deliveredTo
                let delivery = delivered == 0
                    ? "no session is connected: it will be delivered at the app's next registration"
                    : "delivered to \(delivered) connected session\(delivered == 1 ? "" : "s")"
                return ["wipe \(reply.directiveId) ordered for \(app): \(delivery)"]
            }
    }
}
