import ProctorPolicy
import ProctorProtocol

/// `proctorctl apps` and `proctorctl app ID`: the inventory, and one app in detail.
enum AppsCommand {
    static let exitStatuses = AdminClient.exitStatuses(
        refused: "proctord refused: permission denied, or (app) no such app in policy or inventory.")

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
                + "delivered, completed), and the data keys proctord holds for it per user (created, last released to "
                + "the app, destroyed by a wipe or retirement; never the key itself).",
            "Times are shown in the local time zone.",
        ],
        exitStatuses: exitStatuses,
        examples: [
            ("proctorctl app com.example.notes", "Show the notes app."),
            ("proctorctl app com.example.notes --json | jq .app.dlp", "Print its effective data-leak rules as JSON."),
        ],
        run: show)

    static func list(_ arguments: ParsedArguments, context: CommandContext) throws(CommandFailure) -> ExitStatus {
        try AdminClient(arguments, context: context).call(Admin.ListApps.self).print(arguments, on: context.console) { reply in
            guard !reply.apps.isEmpty else { return ["no apps in policy or inventory"] }
            var table = TextTable("APP", "STATE", "SESSIONS", "LAST SEEN", "VERSION")
            for app in reply.apps.sorted(by: { $0.appId.utf8.lexicographicallyPrecedes($1.appId.utf8) }) {
                table.rows.append([app.appId, state(inPolicy: app.inPolicy, app.state), String(app.connectedSessions),
                                   app.lastSeen.map(LocalTime.format) ?? "-", app.version ?? "-"])
            }
            return table.lines
        }
    }

    static func show(_ arguments: ParsedArguments, context: CommandContext) throws(CommandFailure) -> ExitStatus {
        try AdminClient(arguments, context: context)
            .call(Admin.GetApp.self, Admin.AppRequest(appId: arguments.positionals[0]))
            .print(arguments, on: context.console) { reply in lines(describing: reply.app) }
    }

    /// `proctorctl app ID`'s readable form.
    private static func lines(describing app: Admin.AppDetail) -> [String] {
        var fields = FieldList()
        fields.add("app", app.appId)
        fields.add("state", state(inPolicy: app.inPolicy, app.state))
        if let registration = app.lastRegistration {
            fields.add("last registration", "\(LocalTime.format(registration.at)), "
                + "version \(registration.version ?? "not given"), pid \(registration.pid), uid \(registration.uid)")
        } else {
            fields.add("last registration", "never")
        }
        if let event = app.lastEvent {
            fields.add("last event", "\(LocalTime.format(event.at)), \(event.event)")
        } else {
            fields.add("last event", "none")
        }

        fields.add("sessions", app.sessions.isEmpty ? "none connected" : "\(app.sessions.count) connected")
        if !app.sessions.isEmpty {
            var table = TextTable("SESSION", "PID", "UID", "REGISTERED", "SUBSCRIBED", "EXECUTABLE")
            for session in app.sessions {
                table.rows.append([session.id, String(session.pid), String(session.uid), LocalTime.format(session.registeredAt),
                                   session.subscribed ? "yes" : "no", session.executable])
            }
            for line in table.lines { fields.addDetail(line) }
        }
        let enforcement = app.sessions.compactMap { session in session.fileExportEnforcement.map { (session.id, $0) } }
        if !enforcement.isEmpty {
            fields.add("file export", "")
            for (session, reported) in enforcement { fields.addDetail("\(session)  \(Self.describe(reported))") }
        }

        if let compliance = app.complianceState {
            fields.add("compliance state", compliance.compliant ? "compliant" : "violation: \(compliance.reason)")
        } else {
            fields.add("compliance state", app.inPolicy ? "unknown (never registered)" : "not in policy")
        }
        for (section, value) in [("config", app.config), ("dlp", app.dlp), ("compliance", app.compliance)] {
            let lines = JSONLeaves.lines(.object(value))
            fields.add(section, lines.isEmpty ? "none" : "")
            for line in lines { fields.addDetail(line) }
        }

        let feedback = app.feedback
        fields.add("feedback", feedback.isEmpty ? "none" : "\(feedback.count) key\(feedback.count == 1 ? "" : "s")")
        if !feedback.isEmpty {
            var table = TextTable("KEY", "SEVERITY", "AT", "MESSAGE")
            for entry in feedback {
                table.rows.append([entry.key, entry.severity.rawValue, LocalTime.format(entry.at), entry.message])
            }
            for line in table.lines { fields.addDetail(line) }
        }

        fields.add("policy applied", policyAcknowledgement(app))
        if !app.acknowledgements.isEmpty {
            var table = TextTable("POLICY VERSION", "STATUS", "AT")
            for acknowledgement in app.acknowledgements {
                table.rows.append([acknowledgement.policyVersion, acknowledgement.status.rawValue,
                                   LocalTime.format(acknowledgement.at)])
            }
            for line in table.lines { fields.addDetail(line) }
        }

        fields.add("wipes", app.wipes.isEmpty ? "none" : "\(app.wipes.count)")
        if !app.wipes.isEmpty {
            var table = TextTable("DIRECTIVE", "ISSUED", "BY UID", "DELIVERED", "COMPLETED", "STATE")
            for wipe in app.wipes {
                table.rows.append([wipe.id, LocalTime.format(wipe.issuedAt), String(wipe.issuedByUid),
                                   wipe.deliveredAt.map(LocalTime.format) ?? "-", wipe.completedAt.map(LocalTime.format) ?? "-",
                                   wipe.state.rawValue])
            }
            for line in table.lines { fields.addDetail(line) }
        }
        addDataKeys(app.dataKeys, to: &fields)
        return fields.lines
    }

    /// The data keys proctord holds for the app, one row per user and generation: when each was
    /// created, last released to the app and destroyed (never the key itself).
    private static func addDataKeys(_ keys: [Admin.DataKeyState]?, to fields: inout FieldList) {
        guard let keys else { return fields.add("data keys", "none") }
        fields.add("data keys", "\(keys.filter { $0.destroyedAt == nil }.count) live, \(keys.filter { $0.destroyedAt != nil }.count) destroyed")
        var table = TextTable("UID", "GENERATION", "KEY ID", "CREATED", "LAST RELEASED", "DESTROYED")
        for key in keys {
            table.rows.append([String(key.uid), String(key.generation), key.keyId, LocalTime.format(key.createdAt),
                               key.lastReleasedAt.map(LocalTime.format) ?? "-", key.destroyedAt.map(LocalTime.format) ?? "-"])
        }
        for line in table.lines { fields.addDetail(line) }
    }

    /// Who enforces a session's export rule, as its SDK reported it.
    private static func describe(_ enforcement: Admin.FileExportEnforcement) -> String {
        switch enforcement.mode {
        case .kernel: "kernel" + (enforcement.landlockABI.map { " (Landlock ABI \($0))" } ?? "")
        case .advisory: "advisory: " + (enforcement.reason ?? "no reason given")
        }
    }

    /// Whether the app acknowledged the policy in force, and with what result.
    private static func policyAcknowledgement(_ app: Admin.AppDetail) -> String {
        guard let latest = app.acknowledgements.first else { return "no acknowledgement" }
        let result = "\(latest.policyVersion) \(latest.status.rawValue) at \(LocalTime.format(latest.at))"
        guard let inForce = app.policyVersion, inForce != latest.policyVersion else {
            return app.policyVersion == nil ? result : "current: " + result
        }
        return "behind: policy \(inForce) in force, last acknowledged " + result
    }

    /// The app's state in policy; an app that registered once but is no longer in policy has none.
    private static func state(inPolicy: Bool, _ state: AppState?) -> String {
        guard inPolicy else { return "not in policy" }
        return state?.rawValue ?? "-"
    }
}
