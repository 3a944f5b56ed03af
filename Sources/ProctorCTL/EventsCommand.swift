import Glibc
import JSONCore
import ProctorProtocol

/// `proctorctl events`: follows proctord's stream of decisions and lifecycle events.
enum EventsCommand {
    /// The kinds of event proctord sends (io.proctor.Admin.EventFilter).
    static let kinds = ["decision", "lifecycle", "registration", "policy", "wipe", "feedback", "notification"]

    static let verb = Verb(
        words: ["events"],
        summary: "print proctord's events as they happen",
        argumentsSynopsis: "",
        positionalCount: 0...0,
        options: [
            .value("--app", "ID", help: "Only events of the app ID."),
            .value("--kind", "K", help: "Only events of kind K: " + kinds.joined(separator: ", ")
                + ". Repeat it, or list kinds separated by commas, for several."),
            .value("--count", "N", help: "Stop after N events (N at least 1)."),
            .flag("--follow", help: "When proctord goes away (a restart, a stop), wait for it and go on instead of "
                + "ending with exit status 3. Events while it is away are missed. proctord must be running when "
                + "the command starts, so a wrong address is still found at once."),
        ] + AdminClient.options(jsonOutput: "each event as one JSON object per line"),
        description: [
            "Subscribes to proctord's event stream (io.proctor.Admin.Events) and prints each event as it arrives: "
                + "decisions, app lifecycle events, registrations, policy changes, wipes, feedback and notifications. "
                + "proctord sends only events that happen after the subscription; there is no backlog (the journal "
                + "keeps the history: journalctl -u proctord).",
            "Runs until interrupted (Ctrl-C), until --count events have been printed, or until proctord goes away. "
                + "Each event is one line: the time in the local time zone, the kind, the app (- for none) and the "
                + "event's data as key=value pairs. With --json each event is one JSON object per line, "
                + "{\"at\", \"kind\", \"appId\", \"data\"} as proctord sends it, ready for jq.",
        ],
        exitStatuses: [
            (.success, "--count events were printed, or proctord ended the stream."),
            (.invalidInput, "The command line is wrong (an unknown kind, a bad --count)."),
            (.daemonUnreachable, "proctord is not running at the address, or it went away and --follow was not given."),
            (.daemonRefused, "proctord refused, such as permission denied."),
        ],
        examples: [
            ("proctorctl events", "Watch everything proctord does."),
            ("proctorctl events --app com.example.notes --kind decision --follow",
             "Watch the notes app's decisions, across restarts of proctord."),
            ("proctorctl events --kind wipe --count 1 --json", "Wait for the next wipe and print it as JSON."),
        ],
        run: run)

    static func run(_ arguments: ParsedArguments, context: CommandContext) throws(CommandFailure) -> ExitStatus {
        var filter = Admin.EventFilter(appId: arguments.value("--app"))
        let requestedKinds = arguments.allValues("--kind").flatMap { $0.split(separator: ",").map(String.init) }
        for kind in requestedKinds where !kinds.contains(kind) {
            throw .usage(UsageError("unknown event kind \"\(kind)\", expected one of \(kinds.joined(separator: ", "))"))
        }
        if !requestedKinds.isEmpty { filter.kinds = requestedKinds }
        var remaining: Int?
        if let text = arguments.value("--count") {
            guard let count = Int(text), count >= 1 else {
                throw .usage(UsageError("--count must be a whole number, 1 or more; found \"\(text)\""))
            }
            remaining = count
        }
        let request = Admin.Events.Request(filter: filter == Admin.EventFilter() ? nil : filter)
        let json = arguments.has("--json")
        var client = try AdminClient(arguments, context: context, timeout: nil)
        while true {
            do {
                try client.stream(Admin.Events.self, request) { answer throws(CommandFailure) in
                    let event = try answer.message().event
                    context.console.print(json ? (answer.json["event"] ?? event.json).serializedString() : line(for: event))
                    if let count = remaining {
                        remaining = count - 1
                        return count > 1
                    }
                    return true
                }
                return .success
            } catch .daemonUnreachable(let address, let reason) where arguments.has("--follow") {
                context.console.printError("proctorctl events: lost proctord at \(address)"
                    + (reason.map { " (\($0))" } ?? "") + "; waiting for it")
                client = try reconnect(arguments, context: context)
                context.console.printError("proctorctl events: connected to proctord at \(address) again")
            }
        }
    }

    /// Connects again once a second until proctord answers; only a refusal or bad input ends it.
    private static func reconnect(_ arguments: ParsedArguments, context: CommandContext) throws(CommandFailure) -> AdminClient {
        while true {
            var pause = timespec(tv_sec: 1, tv_nsec: 0)
            var left = timespec()
            while nanosleep(&pause, &left) != 0, errno == EINTR { pause = left }
            do {
                return try AdminClient(arguments, context: context, timeout: nil)
            } catch .daemonUnreachable {
                continue
            }
        }
    }

    /// `2026-11-29T14:03:05+01:00  decision  com.example.notes  action=print allowed=false …`
    static func line(for event: Admin.Event) -> String {
        let data = JSONValue.object(event.data)
        let pairs = JSONLeaves.of(data).compactMap { leaf -> String? in
            guard !leaf.path.components.isEmpty else { return nil }
            let text = leaf.value.stringValue ?? leaf.value.serializedString()
            let quoted = text.isEmpty || text.contains(" ") || text.contains("\"") ? JSONValue.string(text).serializedString() : text
            return "\(leaf.path)=\(quoted)"
        }
        let head = [LocalTime.format(event.at), event.kind, event.appId ?? "-"]
        return head.joined(separator: "  ") + (pairs.isEmpty ? "" : "  " + pairs.joined(separator: " "))
    }
}
