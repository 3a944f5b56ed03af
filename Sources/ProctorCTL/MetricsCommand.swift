import ProctorProtocol

/// `proctorctl metrics`: proctord's counters as Prometheus text, for node_exporter's textfile
/// collector or any scraper that reads the exposition format.
enum MetricsCommand {
    static let verb = Verb(
        words: ["metrics"],
        summary: "print proctord's counters in the Prometheus text format",
        argumentsSynopsis: "",
        positionalCount: 0...0,
        options: AdminClient.options(),
        description: [
            "Asks proctord (io.proctor.Admin.Status) for its counters and prints them in the Prometheus text "
                + "exposition format (version 0.0.4, which node_exporter's textfile collector reads): decisions by action "
                + "and result, registrations refused by reason, sessions and apps, log messages dropped and lost, state "
                + "storage failures, uptime, the policy's load time, and for signed bundles the highest serial applied "
                + "and when, the last fetch and the last successful one, fetch failures and refused bundles. Counters "
                + "count since proctord started.",
            "Written to a file in node_exporter's textfile directory (atomically: write a temporary file, then "
                + "rename), prometheus-node-exporter exposes them.",
        ],
        exitStatuses: AdminClient.questionExitStatuses,
        examples: [
            ("proctorctl metrics > /var/lib/prometheus/node-exporter/proctor.prom.$$ && "
                + "mv /var/lib/prometheus/node-exporter/proctor.prom.$$ /var/lib/prometheus/node-exporter/proctor.prom",
             "Publish the metrics for node_exporter."),
        ],
        run: run)

    static func run(_ arguments: ParsedArguments, context: CommandContext) throws(CommandFailure) -> ExitStatus {
        let reply = try AdminClient(arguments, context: context).call(Admin.Status.self).message()
        for line in lines(reply) { context.console.print(line) }
        return .success
    }

    /// The exposition text of a Status reply, one metric family after another.
    static func lines(_ reply: Admin.Status.Reply) -> [String] {
        var text = MetricsText()
        let counts = reply.counts
        text.family("proctor_decisions_total", .counter, "Decisions proctord made since it started, by action and result.",
                    counts.decisions.flatMap { count in
                        let action = "action=\"\(MetricsText.escape(count.action))\""
                        return [("\(action),result=\"allowed\"", Double(count.allowed)),
                                ("\(action),result=\"denied\"", Double(count.denied))]
                    })
        text.family("proctor_registrations_refused_total", .counter, "Registrations refused since proctord started, by reason.",
                    counts.registrationsRefused.map { ("reason=\"\(MetricsText.escape($0.reason))\"", Double($0.count)) })
        text.family("proctor_sessions", .gauge, "Open app sessions.", [("", Double(counts.sessions))])
        text.family("proctor_apps_connected", .gauge, "Apps with at least one session.", [("", Double(counts.appsConnected))])
        text.family("proctor_apps_known", .gauge, "Apps in policy or seen registering.", [("", Double(counts.appsKnown))])
        text.family("proctor_log_messages_dropped_total", .counter, "Log messages the bounded log queue dropped.",
                    [("", Double(counts.logMessagesDropped))])
        text.family("proctor_log_sink_failures_total", .counter, "Log messages the log sink failed to write.",
                    [("", Double(counts.logSinkFailures))])
        text.family("proctor_storage_failures_total", .counter, "State storage operations that failed.",
                    [("", Double(counts.storageFailures))])
        text.family("proctor_events_dropped_total", .counter, "Events dropped from the event history's queue.",
                    [("", Double(counts.eventsDropped))])
        text.family("proctor_uptime_seconds", .gauge, "Seconds since proctord started.", [("", reply.uptimeSeconds)])
        if let loaded = LocalTime.parse(reply.policy.loadedAt) {
            text.family("proctor_policy_loaded_timestamp_seconds", .gauge, "When the policy in force was loaded.",
                        [("version=\"\(MetricsText.escape(reply.policy.version))\"", Double(loaded))])
        }
        if let fleet = reply.fleet {
            if let serial = fleet.lastAppliedSerial {
                text.family("proctor_bundle_serial", .gauge, "The highest signed bundle serial applied.", [("", Double(serial))])
            }
            timestamp(&text, "proctor_bundle_applied_timestamp_seconds", "When that serial was applied.", fleet.lastAppliedAt)
            timestamp(&text, "proctor_bundle_last_fetch_timestamp_seconds", "When the bundle was last fetched or tried.",
                      fleet.lastFetchAt)
            timestamp(&text, "proctor_bundle_last_successful_fetch_timestamp_seconds",
                      "When the server last answered a fetch with a bundle or 304.", fleet.lastSuccessfulFetchAt)
            text.family("proctor_bundle_fetch_failures_total", .counter, "Failed bundle fetches.",
                        [("", Double(fleet.fetchFailures))])
            text.family("proctor_bundles_refused_total", .counter, "Signed bundles refused (and unsigned pushes refused).",
                        [("", Double(fleet.bundlesRefused))])
            if let delivery = fleet.statusReports {
                timestamp(&text, "proctor_status_report_last_timestamp_seconds", "When the last status POST finished.",
                          delivery.lastReportAt)
                text.family("proctor_status_reports_total", .counter, "Status documents POSTed to StatusURL=, by result.",
                            [("result=\"sent\"", Double(delivery.reportsSent)), ("result=\"failed\"", Double(delivery.reportFailures))])
            }
        }
        return text.lines
    }

    /// A gauge of Unix seconds for an RFC 3339 time of the reply, if there is one.
    private static func timestamp(_ text: inout MetricsText, _ name: String, _ help: String, _ time: String?) {
        guard let seconds = time.flatMap(LocalTime.parse) else { return }
        text.family(name, .gauge, help, [("", Double(seconds))])
    }
}

/// Prometheus text exposition format: `# HELP`, `# TYPE`, then one sample per line.
struct MetricsText {
    enum Kind: String { case counter, gauge }
    private(set) var lines: [String] = []

    mutating func family(_ name: String, _ kind: Kind, _ help: String, _ samples: [(labels: String, value: Double)]) {
        lines.append("# HELP \(name) \(help)")
        lines.append("# TYPE \(name) \(kind.rawValue)")
        for sample in samples {
            let labels = sample.labels.isEmpty ? "" : "{\(sample.labels)}"
            let value = sample.value.rounded() == sample.value && abs(sample.value) < 1e15
                ? String(Int64(sample.value)) : String(sample.value)
            lines.append("\(name)\(labels) \(value)")
        }
    }

    /// A label value with `\`, `"` and newlines escaped.
    static func escape(_ value: String) -> String {
        value.replacingOccurrences("\\", "\\\\").replacingOccurrences("\"", "\\\"").replacingOccurrences("\n", "\\n")
    }
}

extension String {
    fileprivate func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
