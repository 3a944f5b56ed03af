import ProctorProtocol

/// `proctorctl status`: the daemon, the policy in force, the last reload and the counts.
enum StatusCommand {
    static let verb = Verb(
        words: ["status"],
        summary: "show the policy in force, last reload, MDM pull, counts",
        argumentsSynopsis: "",
        positionalCount: 0...0,
        options: AdminClient.options(),
        description: [
            "Asks proctord (io.proctor.Admin.Status) for its version and uptime, the policy in force (version, the sha256 "
                + "of its canonical form, the files and bundles it was built from, when it was loaded), the outcome of the "
                + "last reload, and how many apps it knows, how many are connected, and how many decisions it has allowed "
                + "and denied since it started, by action (detail lines: only actions with decisions), then, when there "
                + "are any, app registrations refused by reason and state storage operations that failed.",
            "A reload that failed is shown with its problems: the policy before it stayed in force. "
                + "Times are shown in the local time zone.",
            "Then signed bundles (docs/fleet.md): the BundleURL= proctord pulls from (source), whether only signed "
                + "policy is accepted and the ids of the trusted keys (signed), the highest bundle serial applied, the "
                + "last fetch and its result (unchanged, applied, refused or failed), the next fetch, the last "
                + "fetch the server answered with the fetch failures and refused bundles since start, and the last "
                + "error: a refused bundle's or failed fetch's reason and message. With a StatusURL=, the status "
                + "documents POSTed there: the URL (reports to), the last POST and its result (sent or failed), the "
                + "reports sent and failed since start, and the last failure with its reason and message (last failed). "
                + "proctorctl metrics prints the same counters for Prometheus.",
        ],
        exitStatuses: AdminClient.questionExitStatuses,
        examples: [
            ("proctorctl status", "Show the daemon's state."),
            ("proctorctl status --json | jq -r .policy.version", "Print the version of the policy in force."),
            ("proctorctl status --address /tmp/proctor/io.proctor.Admin", "Ask a proctord started by 'make run'."),
        ],
        run: run)

    static func run(_ arguments: ParsedArguments, context: CommandContext) throws(CommandFailure) -> ExitStatus {
        try AdminClient(arguments, context: context).call(Admin.Status.self).print(arguments, on: context.console, lines)
    }

    /// The human-readable form of a status reply: one field per line.
    private static func lines(_ reply: Admin.Status.Reply) -> [String] {
        let policy = reply.policy, counts = reply.counts
        var fields = FieldList()
        fields.add("proctord", "\(reply.version), started \(LocalTime.format(reply.startedAt)), "
            + "up \(LocalTime.duration(reply.uptimeSeconds))")
        fields.add("policy", "version \(policy.version), loaded \(LocalTime.format(policy.loadedAt))")
        fields.add("sha256", policy.sha256)
        fields.add("sources", policy.sources.joined(separator: ", "))
        if let reload = reply.lastReload {
            let at = LocalTime.format(reload.at)
            if reload.ok {
                fields.add("last reload", "\(at), ok")
            } else {
                let problems = reload.problems
                fields.add("last reload", "\(at), FAILED with \(problems.count) problem\(problems.count == 1 ? "" : "s"); "
                    + "the policy above stayed in force")
                for problem in problems {
                    fields.addDetail("\(problem.path): \(problem.message)")
                }
            }
        } else {
            fields.add("last reload", "none since start")
        }
        fields.add("apps", "\(counts.appsKnown) known, \(counts.appsConnected) connected, "
            + "\(counts.sessions) session\(counts.sessions == 1 ? "" : "s")")
        fields.add("decisions", "\(counts.decisionsAllowed) allowed, \(counts.decisionsDenied) denied")
        for count in counts.decisions where count.allowed + count.denied > 0 {
            fields.addDetail("\(count.action): \(count.allowed) allowed, \(count.denied) denied")
        }
        let refused = counts.registrationsRefused.filter { $0.count > 0 }
        if !refused.isEmpty {
            // A short label: the values stay in the column the other fields use.
            fields.add("refused", plural(refused.map(\.count).reduce(0, +), "registration") + " ("
                + refused.map { "\($0.count) \($0.reason)" }.joined(separator: ", ") + ")")
        }
        if counts.storageFailures > 0 {
            fields.add("storage", plural(counts.storageFailures, "operation") + " on the state database failed (see the journal)")
        }
        if counts.eventsDropped > 0 {
            fields.add("history", plural(counts.eventsDropped, "event") + " dropped: the state database could not take them")
        }
        let dropped = counts.logMessagesDropped
        let lost = counts.logSinkFailures
        var logProblems: [String] = []
        if dropped > 0 { logProblems.append("\(dropped) message\(dropped == 1 ? "" : "s") dropped by the bounded log queue") }
        if lost > 0 { logProblems.append("\(lost) lost: the log sink failed (is journald running?)") }
        if !logProblems.isEmpty { fields.add("log", logProblems.joined(separator: "; ")) }
        if let fleet = reply.fleet { addFleet(fleet, to: &fields) }
        return fields.lines
    }

    private static func addFleet(_ fleet: Admin.FleetStatus, to fields: inout FieldList) {
        fields.add("source", fleet.bundleUrl ?? "none (no BundleURL= in proctord.conf)")
        let keys = fleet.trustedKeys.isEmpty ? "no trusted keys in keys.d" : "trusted keys " + fleet.trustedKeys.joined(separator: ", ")
        fields.add("signed", (fleet.requireSignedBundles ? "required" : "optional") + "; " + keys)
        if let serial = fleet.lastAppliedSerial { fields.add("serial", "\(serial) (the highest applied)") }
        if let at = fleet.lastFetchAt {
            fields.add("last fetch", "\(LocalTime.format(at)), \(fleet.lastFetchResult ?? "?")")
        }
        if let at = fleet.nextFetchAt { fields.add("next fetch", LocalTime.format(at)) }
        if fleet.lastFetchAt != nil {
            fields.add("fetches", "last answered \(fleet.lastSuccessfulFetchAt.map(LocalTime.format) ?? "never"); "
                + "\(plural(fleet.fetchFailures, "failure")), \(plural(fleet.bundlesRefused, "bundle")) refused since start")
        }
        if let error = fleet.lastError {
            fields.add("last error", "\(LocalTime.format(error.at)), \(error.reason): \(error.message)")
        }
        if let delivery = fleet.statusReports { addStatusDelivery(delivery, to: &fields) }
    }

    private static func addStatusDelivery(_ delivery: Admin.StatusDelivery, to fields: inout FieldList) {
        fields.add("reports to", delivery.statusUrl)
        if let at = delivery.lastReportAt {
            fields.add("last report", "\(LocalTime.format(at)), \(delivery.lastReportResult ?? "?")")
        }
        fields.add("reports", "\(delivery.reportsSent) sent, \(plural(delivery.reportFailures, "failure")) since start")
        if let error = delivery.lastReportError {
            fields.add("last failed", "\(LocalTime.format(error.at)), \(error.reason): \(error.message)")
        }
    }

    /// "1 failure", "2 failures".
    private static func plural(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }
}
