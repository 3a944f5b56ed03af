import Glibc
import JSONCore
import ProctorProtocol

/// `proctorctl events`: proctord's recorded events, and with `--follow` the live ones after
/// them, in journalctl's vocabulary.
enum EventsCommand {
    /// The kinds of event proctord records (io.proctor.Admin.EventFilter).
    static let kinds = ["decision", "lifecycle", "denial", "registration", "policy", "wipe", "feedback", "notification", "compliance", "dataKey", "enforcement"]
    /// What `--output` takes.
    static let outputFormats = ["short", "json"]
    /// How many recorded events `--follow` shows first when neither `--lines` nor `--since` says.
    static let followBacklog = 10

    static let verb = Verb(
        words: ["events"],
        summary: "print proctord's recorded events, and follow new ones",
        argumentsSynopsis: "",
        positionalCount: 0...0,
        options: [
            .value("--since", "TIME", short: "-S", help: "Only events that occurred at TIME or later. TIME is an RFC 3339 time "
                + "(2026-11-29T14:00:00Z), a local time YYYY-MM-DD [HH:MM[:SS]], now, today, yesterday, tomorrow, "
                + "or relative to now: -1h, -30m, -1d12h, +5m, 2h ago."),
            .value("--until", "TIME", short: "-U", help: "Only events that occurred before TIME (as for --since)."),
            .value("--app", "ID", help: "Only events of the app ID."),
            .value("--kind", "K", help: "Only events of kind K: " + kinds.joined(separator: ", ")
                + ". Repeat it, or list kinds separated by commas, for several."),
            .value("--lines", "N", short: "-n", help: "Only the newest N matching events (0 or more); answered at once. "
                + "Without it, every matching event proctord keeps (at most 10000, the newest; a note on standard "
                + "error says when more matched)."),
            .flag("--follow", short: "-f", help: "After the recorded events (the newest 10 unless --lines or --since says), "
                + "print new events as they happen, until interrupted. No event is missed or printed twice in between. "
                + "When proctord goes away (a restart, a stop), wait for it and go on from the last event printed: events "
                + "it recorded meanwhile are printed then. proctord must be running when the command starts."),
            .value("--output", "FORMAT", short: "-o", help: "short (the default: one readable line per event) or json "
                + "(the same as --json)."),
        ] + AdminClient.options(jsonOutput: "each event as one JSON object per line"),
        description: [
            "Prints the events proctord recorded (io.proctor.Admin.EventHistory), oldest first: decisions, app "
                + "lifecycle events, data-action denials the SDK reported, registrations (including refused launches of "
                + "blocked or retired apps), policy changes, wipes, feedback, notifications, compliance changes of running apps and data keys released or destroyed. proctord keeps a bounded "
                + "history in its state database (by default the last 100000 events or 30 days, whichever is less: "
                + "proctord's --event-history-limit and --event-history-age), which survives restarts.",
            "Each event is one line: when it occurred in the local time zone, the kind, the app (- for none) and the "
                + "event's data as key=value pairs; receivedAt=TIME follows when proctord received it more than a second "
                + "later (an app's report queued while proctord was away). With --json (or --output json) each event is "
                + "one JSON object per line, {\"id\", \"occurredAt\", \"receivedAt\", \"kind\", \"appId\", \"data\"} as "
                + "proctord sends it, ready for jq.",
        ],
        exitStatuses: AdminClient.exitStatuses(
            success: "The events were printed (or, with --follow, the stream ended).",
            invalidInput: "The command line is wrong (an unknown kind, a bad time or --lines, --until with --follow).",
            unreachable: "proctord is not running at the address, or it went away and --follow was not given."),
        examples: [
            ("proctorctl events -n 20", "The last 20 events."),
            ("proctorctl events --since -1h --kind decision,denial",
             "The decisions and denials of the last hour."),
            ("proctorctl events --since yesterday --until today --app com.example.notes --json",
             "Everything the notes app did yesterday, as JSON."),
            ("proctorctl events --app com.example.notes --follow",
             "The notes app's last 10 events, then its new ones as they happen, across restarts of proctord."),
        ],
        run: run)

    /// What the command line asks for, checked.
    struct Request {
        var filter: Admin.EventFilter?
        var since: String?
        var until: String?
        var lines: Int?
        var follow: Bool
        var json: Bool
    }

    static func request(_ arguments: ParsedArguments, now: Int64) throws(CommandFailure) -> Request {
        var filter = Admin.EventFilter(appId: arguments.value("--app"))
        let requestedKinds = arguments.allValues("--kind").flatMap { $0.split(separator: ",").map(String.init) }
        for kind in requestedKinds where !kinds.contains(kind) {
            throw .usage(UsageError("unknown event kind \"\(kind)\", expected one of \(kinds.joined(separator: ", "))"))
        }
        if !requestedKinds.isEmpty { filter.kinds = requestedKinds }
        func time(_ option: String) throws(CommandFailure) -> String? {
            guard let text = arguments.value(option) else { return nil }
            guard let milliseconds = EventTime.parse(text, now: now) else {
                throw .usage(UsageError("\(option) expects a time such as 2026-11-29 14:00, -1h, today or "
                                        + "2026-11-29T14:00:00Z; found \"\(text)\""))
            }
            return RFC3339.string(milliseconds: milliseconds)
        }
        var lines: Int?
        if let text = arguments.value("--lines") {
            guard let count = Int(text), (0...Admin.EventHistory.maxLimit).contains(count) else {
                throw .usage(UsageError("--lines must be a whole number from 0 to \(Admin.EventHistory.maxLimit); found \"\(text)\""))
            }
            lines = count
        }
        let format = arguments.value("--output") ?? "short"
        guard outputFormats.contains(format) else {
            throw .usage(UsageError("--output expects \(outputFormats.joined(separator: " or ")); found \"\(format)\""))
        }
        let follow = arguments.has("--follow")
        if follow, arguments.value("--until") != nil {
            throw .usage(UsageError("--until cannot be combined with --follow: new events occur after any --until"))
        }
        return Request(filter: filter == Admin.EventFilter() ? nil : filter, since: try time("--since"), until: try time("--until"),
                       lines: lines, follow: follow, json: arguments.has("--json") || format == "json")
    }

    static func run(_ arguments: ParsedArguments, context: CommandContext) throws(CommandFailure) -> ExitStatus {
        let request = try request(arguments, now: currentMilliseconds())
        var client = try AdminClient(arguments, context: context, timeout: nil)
        func print(_ event: Admin.Event, _ json: JSONValue?) {
            context.console.print(request.json ? (json ?? event.json).serializedString() : line(for: event))
        }
        // The recorded events: all of them matching, or the newest --lines.
        let backlog = request.lines ?? (request.follow && request.since == nil ? followBacklog : nil)
        let history = try client.call(Admin.EventHistory.self,
                                      Admin.EventHistory.Request(filter: request.filter, since: request.since, until: request.until,
                                                                 limit: backlog.map { max($0, 1) }))
        let recorded = try history.message()
        if backlog != 0 {
            let raw = history.json["events"]?.arrayValue ?? []
            for (index, event) in recorded.events.enumerated() { print(event, raw.indices.contains(index) ? raw[index] : nil) }
        }
        if recorded.truncated, request.lines == nil, !request.follow {
            context.console.printError("proctorctl events: more events matched; these are the newest "
                                       + "\(recorded.events.count) (narrow with --since, --until or --lines)")
        }
        guard request.follow else { return .success }
        // Then the live ones, from the last recorded: proctord replays what came in between.
        var cursor = recorded.lastId
        while true {
            do {
                try client.stream(Admin.Events.self, Admin.Events.Request(filter: request.filter, after: cursor)) { answer throws(CommandFailure) in
                    let event = try answer.message().event
                    cursor = max(cursor, event.id)
                    print(event, answer.json["event"])
                    return true
                }
                return .success
            } catch .daemonUnreachable(let address, let reason) {
                context.console.printError("proctorctl events: lost proctord at \(address)"
                    + (reason.map { " (\($0))" } ?? "") + "; waiting for it")
                client = try reconnect(arguments, context: context)
                context.console.printError("proctorctl events: connected to proctord at \(address) again")
            }
        }
    }

    private static func currentMilliseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec / 1_000_000)
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
        var late: [String] = []
        if let occurred = RFC3339.milliseconds(event.occurredAt), let received = RFC3339.milliseconds(event.receivedAt),
           received - occurred >= 1000 {
            late = ["receivedAt=" + LocalTime.format(event.receivedAt)]
        }
        let head = [LocalTime.format(event.occurredAt), event.kind, event.appId ?? "-"]
        let tail = pairs + late
        return head.joined(separator: "  ") + (tail.isEmpty ? "" : "  " + tail.joined(separator: " "))
    }
}
