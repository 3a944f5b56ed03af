/// `proctorctl apps` and `proctorctl app ID`: the inventory, and one app in detail.
enum AppsCommand {
    static let exitStatuses: [(ExitStatus, String)] = [
        (.success, "proctord answered."),
        (.invalidInput, "The command line is wrong."),
        (.daemonUnreachable, "proctord is not running at the address, or the exchange failed."),
        (.daemonRefused, "proctord refused: permission denied, or (app) no such app in policy or inventory."),
    ]

    static let listVerb = Verb(
        words: ["apps"],
        summary: "list the apps named in policy or seen registering",
        argumentsSynopsis: "",
        positionalCount: 0...0,
        options: AdminClient.options(),
        description: [
            "Asks proctord (io.proctor.Admin.ListApps) for every app named in policy or seen registering and prints one "
                + "line per app, sorted by app id: its state in policy (authorized, blocked, retired, or not in policy "
                + "for an app that registered once but is no longer named), how many sessions "
                + "are connected now, when it was last seen, and the version it last registered with (- when unknown). "
                + "Times are shown in the local time zone.",
        ],
        exitStatuses: exitStatuses,
        examples: [
            ("proctorctl apps", "List the apps."),
            ("proctorctl apps --json | jq -r '.apps[] | select(.connectedSessions > 0) | .appId'",
             "Print the ids of the apps connected now."),
        ],
        run: list)

    static let showVerb = Verb(
        words: ["app"],
        summary: "show one app: sessions, configuration, rules, wipes",
        argumentsSynopsis: "ID",
        positionalCount: 1...1,
        options: AdminClient.options(),
        description: [
            "Asks proctord (io.proctor.Admin.GetApp) about the app ID and prints its state in policy, its last "
                + "registration and lifecycle event, its connected sessions, the managed configuration it receives, "
                + "its effective data-leak rules and compliance settings (policy defaults merged with its own entry), "
                + "the latest feedback the app reported under each key, what it said it did with each policy version "
                + "(applied, error, unsupported), and the wipes ordered for it with how far each got (issued, "
                + "delivered, completed).",
            "Times are shown in the local time zone.",
        ],
        exitStatuses: exitStatuses,
        examples: [
            ("proctorctl app com.example.notes", "Show the notes app."),
            ("proctorctl app com.example.notes --json | jq .app.dlp", "Print its effective data-leak rules as JSON."),
        ],
        run: show)

    static func list(_ arguments: ParsedArguments, context: CommandContext) throws(CommandFailure) -> ExitStatus {
        let reply = try AdminClient(arguments, context: context).call("ListApps")
        if arguments.has("--json") {
            context.console.print(reply.value.serializedString())
            return .success
        }
        var table = TextTable("APP", "STATE", "SESSIONS", "LAST SEEN", "VERSION")
        var rows: [(String, [String])] = []
        for app in try reply.array("apps") {
            let id = try app.string("appId")
            rows.append((id, [id, try state(of: app), String(try app.int("connectedSessions")),
                              try app.optionalString("lastSeen").map(LocalTime.format) ?? "-",
                              try app.optionalString("version") ?? "-"]))
        }
        for (_, row) in rows.sorted(by: { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }) { table.rows.append(row) }
        if table.rows.isEmpty {
            context.console.print("no apps in policy or inventory")
            return .success
        }
        for line in table.lines { context.console.print(line) }
        return .success
    }

    static func show(_ arguments: ParsedArguments, context: CommandContext) throws(CommandFailure) -> ExitStatus {
        let reply = try AdminClient(arguments, context: context).call("GetApp", ["appId": .string(arguments.positionals[0])])
        if arguments.has("--json") {
            context.console.print(reply.value.serializedString())
            return .success
        }
        let app = try reply.object("app")
        var fields = FieldList()
        fields.add("app", try app.string("appId"))
        fields.add("state", try state(of: app))
        if let registration = try app.optionalObject("lastRegistration") {
            fields.add("last registration", "\(LocalTime.format(try registration.string("at"))), "
                + "version \(try registration.optionalString("version") ?? "not given"), "
                + "pid \(try registration.int("pid")), uid \(try registration.int("uid"))")
        } else {
            fields.add("last registration", "never")
        }
        if let event = try app.optionalObject("lastEvent") {
            fields.add("last event", "\(LocalTime.format(try event.string("at"))), \(try event.string("event"))")
        } else {
            fields.add("last event", "none")
        }

        let sessions = try app.array("sessions")
        fields.add("sessions", sessions.isEmpty ? "none connected" : "\(sessions.count) connected")
        if !sessions.isEmpty {
            var table = TextTable("SESSION", "PID", "UID", "REGISTERED", "SUBSCRIBED", "EXECUTABLE")
            for session in sessions {
                table.rows.append([try session.string("id"), String(try session.int("pid")), String(try session.int("uid")),
                                   LocalTime.format(try session.string("registeredAt")),
                                   try session.bool("subscribed") ? "yes" : "no", try session.string("executable")])
            }
            for line in table.lines { fields.addDetail(line) }
        }

        for section in ["config", "dlp", "compliance"] {
            let value = try app.object(section).value
            let lines = JSONLeaves.lines(value)
            fields.add(section, lines.isEmpty ? "none" : "")
            for line in lines { fields.addDetail(line) }
        }

        let feedback = try app.array("feedback")
        fields.add("feedback", feedback.isEmpty ? "none" : "\(feedback.count) key\(feedback.count == 1 ? "" : "s")")
        if !feedback.isEmpty {
            var table = TextTable("KEY", "SEVERITY", "AT", "MESSAGE")
            for entry in feedback {
                table.rows.append([try entry.string("key"), try entry.string("severity"),
                                   LocalTime.format(try entry.string("at")), try entry.string("message")])
            }
            for line in table.lines { fields.addDetail(line) }
        }

        let acknowledgements = try app.array("acknowledgements")
        fields.add("policy applied", acknowledgements.isEmpty ? "no acknowledgement" : "")
        if !acknowledgements.isEmpty {
            var table = TextTable("POLICY VERSION", "STATUS", "AT")
            for acknowledgement in acknowledgements {
                table.rows.append([try acknowledgement.string("policyVersion"), try acknowledgement.string("status"),
                                   LocalTime.format(try acknowledgement.string("at"))])
            }
            for line in table.lines { fields.addDetail(line) }
        }

        let wipes = try app.array("wipes")
        fields.add("wipes", wipes.isEmpty ? "none" : "\(wipes.count)")
        if !wipes.isEmpty {
            var table = TextTable("DIRECTIVE", "ISSUED", "BY UID", "DELIVERED", "COMPLETED", "STATE")
            for wipe in wipes {
                table.rows.append([try wipe.string("id"), LocalTime.format(try wipe.string("issuedAt")),
                                   String(try wipe.int("issuedByUid")),
                                   try wipe.optionalString("deliveredAt").map(LocalTime.format) ?? "-",
                                   try wipe.optionalString("completedAt").map(LocalTime.format) ?? "-",
                                   try wipe.string("state")])
            }
            for line in table.lines { fields.addDetail(line) }
        }
        for line in fields.lines { context.console.print(line) }
        return .success
    }

    /// The app's state in policy; an app that registered once but is no longer in policy has none.
    private static func state(of app: Reply) throws(CommandFailure) -> String {
        guard try app.bool("inPolicy") else { return "not in policy" }
        return try app.string("state")
    }
}
