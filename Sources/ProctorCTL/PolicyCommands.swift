import JSONCore
import ProctorBundle
import ProctorPolicy
import ProctorProtocol

/// `proctorctl policy show|apply|diff|history|rollback`: the policy in proctord.
enum PolicyCommands {
    static let showVerb = Verb(
        words: ["policy", "show"],
        summary: "print the policy in force and where it came from",
        argumentsSynopsis: "",
        positionalCount: 0...0,
        options: AdminClient.options(),
        description: [
            "Asks proctord (io.proctor.Admin.GetPolicy) for the effective policy: the policy.d drop-ins merged, overlaid "
                + "by the last bundle applied through 'policy apply'. Prints its version, the sha256 of its canonical form, "
                + "when it was loaded and its sources, then a blank line and the document as indented JSON with sorted keys, "
                + "which 'policy apply' and 'policy validate' accept as it is.",
        ],
        exitStatuses: AdminClient.questionExitStatuses,
        examples: [
            ("proctorctl policy show", "Show the policy in force."),
            ("proctorctl policy show --json | jq .policy > in-force.json", "Save the document, to edit and apply it."),
        ],
        run: show)

    static let applyVerb = Verb(
        words: ["policy", "apply"],
        summary: "validate a policy and make it the one in force",
        argumentsSynopsis: "FILE",
        positionalCount: 1...1,
        options: [.value("--expect-version", "V", help: "Apply only if version V is the version in force now "
                      + "(compare and swap), so two administrators cannot overwrite each other's change unseen; "
                      + "otherwise proctord refuses with io.proctor.Admin.VersionConflict and nothing changes."),
                  .flag("--force", help: "Apply even if an earlier applied policy had the same version with other content. "
                      + "A version names one content, so that acknowledgements and --expect-version stay unambiguous: "
                      + "without --force proctord refuses such a policy with io.proctor.Admin.VersionReused.")]
            + AdminClient.options(),
        description: [
            "Reads FILE as 'policy validate' does: a complete policy file, a directory of drop-ins merged like "
                + "/etc/proctor/policy.d, or - for a complete policy on standard input. A policy with problems is "
                + "reported as 'policy validate' reports it and is not sent; so is one whose canonical form is larger "
                + "than a bundle may be (\(PolicyLimits.describe(bytes: PolicyLimits.maxDocumentBytes))).",
            "The merged policy is sent to proctord (io.proctor.Admin.ApplyPolicy), which validates it again, stores it "
                + "durably, makes it the policy in force at once and tells every affected app. It stays in force over "
                + "the policy.d files, across restarts, until another apply or a rollback. Prints the version and sha256 "
                + "now in force.",
            "A FILE holding a signed bundle (the DSSE envelope 'policy sign' prints) is sent as it is "
                + "(io.proctor.Admin.ApplyBundle): proctord verifies its signature with the keys in keys.d, checks that "
                + "its serial is greater than the last applied and that it has not expired, and applies it as above; "
                + "a refused bundle exits 4 naming the reason (bad-signature, unknown-key, rollback, expired, ...). "
                + "Whether a plain policy is accepted at all is proctord's choice (RequireSignedBundles= in "
                + "proctord.conf), never the file's.",
        ],
        exitStatuses: AdminClient.exitStatuses(
            success: "The policy is in force.",
            invalidInput: "The policy has problems, is larger than a bundle may be or cannot be read, or the command "
                + "line is wrong.",
            refused: "proctord refused: permission denied, a version conflict with --expect-version, a version "
                + "already used for other content (without --force), an invalid policy, a refused signed bundle (or a "
                + "plain policy where signed ones are required), or a storage failure. Nothing changed."),
        examples: [
            ("proctorctl policy apply bundle.json", "Apply a policy bundle."),
            ("proctorctl policy apply --expect-version 2026-11-29.2 ./policy.d",
             "Apply a directory of drop-ins, only if 2026-11-29.2 is still in force."),
            ("mdm-export --host desk-42 | proctorctl policy apply -", "Apply a policy another program writes."),
            ("proctorctl policy apply signed-bundle.json", "Apply a bundle signed with 'proctorctl policy sign'."),
        ],
        run: apply)

    static let diffVerb = Verb(
        words: ["policy", "diff"],
        summary: "show what applying a policy would change",
        argumentsSynopsis: "FILE",
        positionalCount: 1...1,
        options: AdminClient.options(jsonOutput: "the comparison as one JSON object (see DESCRIPTION)"),
        description: [
            "Reads FILE as 'policy apply' does and compares it with the policy in force (io.proctor.Admin.GetPolicy), "
                + "both in canonical form, so key order, white space and the split into drop-ins make no difference. "
                + "Nothing is changed.",
            "Prints the versions and sha256 of both, the apps FILE would add, remove and change, and every setting "
                + "that differs under defaults and in the changed apps, as PATH: IN-FORCE -> PROPOSED, each value as "
                + "JSON and (not set) where a side does not say it. With --json prints one object with the keys "
                + "identical, current and proposed ({version, sha256}), appsAdded, appsRemoved, appsChanged, and changes "
                + "(a list of {path, current, proposed}, a side left out where the setting is not set).",
        ],
        exitStatuses: AdminClient.exitStatuses(
            success: "No difference: FILE is the policy in force.", denied: "There are differences.",
            invalidInput: "FILE has problems or cannot be read, or the command line is wrong."),
        examples: [
            ("proctorctl policy diff ./policy.d", "See what a checkout of the policy repository would change."),
            ("proctorctl policy diff bundle.json >/dev/null || proctorctl policy apply bundle.json",
             "Apply a bundle only when it differs from the policy in force."),
        ],
        run: diff)

    static let historyVerb = Verb(
        words: ["policy", "history"],
        summary: "list the applied policies kept for rollback",
        argumentsSynopsis: "",
        positionalCount: 0...0,
        options: AdminClient.options(),
        description: [
            "Asks proctord (io.proctor.Admin.PolicyHistory) for the policies applied through 'policy apply' and "
                + "'policy rollback' that it keeps, newest first: version, when and by which uid it was applied, "
                + "whether as an apply or a rollback, whether it is in force, and its sha256. Times are shown in the "
                + "local time zone.",
        ],
        exitStatuses: AdminClient.questionExitStatuses,
        examples: [("proctorctl policy history", "List the applied policies.")],
        run: history)

    static let rollbackVerb = Verb(
        words: ["policy", "rollback"],
        summary: "put an earlier applied policy back in force",
        argumentsSynopsis: "VERSION",
        positionalCount: 1...1,
        options: AdminClient.options(),
        description: [
            "Asks proctord (io.proctor.Admin.RollbackPolicy) to apply again the policy applied earlier as VERSION "
                + "(see 'policy history'). It is applied like a new 'policy apply': stored, in force at once, announced "
                + "to every affected app, and recorded in the history. Prints the version and sha256 now in force.",
        ],
        exitStatuses: AdminClient.exitStatuses(
            success: "VERSION is in force.",
            refused: "proctord refused: permission denied, no such version in history, or a storage failure."),
        examples: [("proctorctl policy rollback 2026-11-29.1", "Go back to the policy applied as 2026-11-29.1.")],
        run: rollback)

    static func show(_ arguments: ParsedArguments, context: CommandContext) throws(CommandFailure) -> ExitStatus {
        try AdminClient(arguments, context: context).call(Admin.GetPolicy.self).print(arguments, on: context.console) { reply in
            var fields = FieldList()
            fields.add("version", reply.info.version)
            fields.add("sha256", reply.info.sha256)
            fields.add("loaded", LocalTime.format(reply.info.loadedAt))
            fields.add("sources", reply.info.sources.joined(separator: ", "))
            return fields.lines + ["", PrettyJSON.format(.object(reply.policy))]
        }
    }

    static func apply(_ arguments: ParsedArguments, context: CommandContext) throws(CommandFailure) -> ExitStatus {
        let path = arguments.positionals[0]
        let loaded: LoadedPolicy
        if PolicyInput.isDirectory(path) {
            loaded = try PolicyInput.loadForCommand(path)
        } else {
            // Read once (standard input cannot be read twice), then sent as a bundle or a policy.
            let file: (bytes: [UInt8], source: String)
            do {
                file = try PolicyInput.readFile(path)
            } catch {
                // Larger than a policy may be, but perhaps a signed bundle (the envelope line adds a little).
                guard path != "-", let bundle = try? PolicyInput.readFile(path, limit: SignedBundle.maximumBytes),
                      SignedBundle.looksSigned(bundle.bytes) else { throw .invalidInput(error.problems.map(\.description)) }
                return try applySigned(bundle.bytes, arguments, context: context)
            }
            if SignedBundle.looksSigned(file.bytes) { return try applySigned(file.bytes, arguments, context: context) }
            do { loaded = LoadedPolicy(policy: try Policy.parse(file.bytes, source: file.source), sources: [file.source]) }
            catch { throw .invalidInput(error.problems.map(\.description)) }
        }
        // Checked here, before connecting: proctord would refuse it, or close the connection.
        if let problem = Policy.bundleSizeProblem(canonicalSize: loaded.policy.canonicalBytes.count,
                                                  source: path == "-" ? "<stdin>" : path) {
            throw .invalidInput([problem.description])
        }
        let request = Admin.PolicyRequest(policy: loaded.policy.canonicalJSON.objectValue ?? [:],
                                          expectedVersion: arguments.value("--expect-version"),
                                          force: arguments.has("--force") ? true : nil)
        return try AdminClient(arguments, context: context).call(Admin.ApplyPolicy.self, request)
            .print(arguments, on: context.console) { reply in
                ["applied: version \(reply.version) is in force, sha256 \(reply.sha256)"]
            }
    }

    /// Sends a signed bundle as it is: only proctord, with its trusted keys, decides about it.
    private static func applySigned(_ bytes: [UInt8], _ arguments: ParsedArguments,
                                    context: CommandContext) throws(CommandFailure) -> ExitStatus {
        guard arguments.value("--expect-version") == nil else {
            throw .usage(UsageError("--expect-version does not apply to a signed bundle: its serial orders it"))
        }
        let request = Admin.ApplyBundle.Request(bundle: String(decoding: bytes, as: UTF8.self))
        return try AdminClient(arguments, context: context).call(Admin.ApplyBundle.self, request)
            .print(arguments, on: context.console) { reply in
                ["applied: signed bundle serial \(reply.serial), version \(reply.version) is in force, sha256 \(reply.sha256)"]
            }
    }

    static func diff(_ arguments: ParsedArguments, context: CommandContext) throws(CommandFailure) -> ExitStatus {
        let path = arguments.positionals[0]
        let proposed = try PolicyInput.loadForCommand(path).policy
        let answer = try AdminClient(arguments, context: context).call(Admin.GetPolicy.self)
        let document = try answer.message().policy
        let current: Policy
        do {
            current = try Policy.parse(JSONValue.object(document).serialized(), source: "proctord")
        } catch {
            throw .daemonUnreachable(address: answer.address, reason: "unexpected reply: GetPolicy.policy is not a valid "
                + "policy: \(error.problems.first.map(\.description) ?? "")")
        }
        let difference = PolicyDiff(current: current, proposed: proposed)
        if arguments.has("--json") {
            context.console.print(difference.json.serializedString())
        } else {
            for line in difference.lines(proposedName: path == "-" ? "<stdin>" : path) { context.console.print(line) }
        }
        return difference.isEmpty ? .success : .denied
    }

    static func history(_ arguments: ParsedArguments, context: CommandContext) throws(CommandFailure) -> ExitStatus {
        try AdminClient(arguments, context: context).call(Admin.PolicyHistory.self).print(arguments, on: context.console) { reply in
            guard !reply.entries.isEmpty else {
                return ["no applied policy: the policy in force comes from the policy.d files alone"]
            }
            var table = TextTable("VERSION", "APPLIED", "BY UID", "AS", "IN FORCE", "SHA256")
            for entry in reply.entries {
                table.rows.append([entry.version, LocalTime.format(entry.appliedAt), entry.appliedByUid.map(String.init) ?? "-",
                                   entry.kind.rawValue, entry.current ? "yes" : "no", entry.sha256])
            }
            return table.lines
        }
    }

    static func rollback(_ arguments: ParsedArguments, context: CommandContext) throws(CommandFailure) -> ExitStatus {
        try AdminClient(arguments, context: context)
            .call(Admin.RollbackPolicy.self, Admin.RollbackPolicy.Request(version: arguments.positionals[0]))
            .print(arguments, on: context.console) { reply in
                ["rolled back: version \(reply.version) is in force, sha256 \(reply.sha256)"]
            }
    }
}
