import JSONCore
import ProctorPolicy
import ProctorProtocol

/// `proctorctl check APP ACTION [TARGET]`: what would be decided, and why — asked of
/// proctord, or offline of a policy file with `--policy`.
enum CheckCommand {
    static let verb = Verb(
        words: ["check"],
        summary: "explain what would be decided for an app's action",
        argumentsSynopsis: "APP ACTION [TARGET]",
        positionalCount: 2...3,
        options: [
            .value("--size", "N", help: "The number of characters of a clipboard.copy, checked against the clipboard's "
                + "charLimit. Without it the size is unknown, and an unknown size never fits a limit."),
            .value("--app-version", "V", help: "Decide a launch as if the app ran version V (a semantic version such as "
                + "2.4.0), checked against compliance.minVersion."),
            .value("--policy", "PATH", help: "Decide offline with the policy at PATH (a file, a policy.d-style directory, "
                + "or - for standard input) instead of asking proctord. Works where proctord does not run."),
        ] + AdminClient.options(jsonOutput: "proctord's reply, or with --policy the decision, as one JSON object"),
        description: [
            "Asks proctord (io.proctor.Admin.Decide) what it would decide if the app APP did ACTION, and prints "
                + "allowed or denied, the rule that decided (the JSON path of the setting, or builtin.NAME for a "
                + "built-in default) and the reason, then proctord's reasoning step by step. Nothing is recorded as a "
                + "decision of the app.",
            "ACTION is one of " + Action.allCases.map(\.rawValue).joined(separator: ", ") + ". TARGET is the other "
                + "party or the place: the destination app of clipboard.copy, the source app of clipboard.paste, the "
                + "receiver of share.send, the sender of share.receive, the absolute path of file.export, org or plain "
                + "for notification (whether the notification shows organisation data). Without it the other party is "
                + "an unknown, unmanaged app (and file.export or notification has no target, which is denied).",
            "With --policy the decision engine of proctorctl itself decides, with the same rules as proctord, on the "
                + "policy at PATH. Then --json prints exactly {\"allowed\": BOOL, \"rule\": STRING, \"reason\": STRING}, "
                + "with \"violation\" (warn, block or wipe) added for a launch below compliance.minVersion. Without "
                + "--policy, --json prints proctord's reply, which also holds the reasoning as \"explanation\".",
        ],
        exitStatuses: AdminClient.exitStatuses(
            success: "The action would be allowed.", denied: "The action would be denied.",
            invalidInput: "The command line is wrong (an unknown ACTION, a bad --size or --app-version), or the "
                + "policy at PATH has problems."),
        examples: [
            ("proctorctl check com.example.notes clipboard.copy org.other.editor --size 120",
             "May the notes app copy 120 characters to an unmanaged editor?"),
            ("proctorctl check com.example.notes file.export /home/alice/Documents/Work/plan.odt",
             "May it save a file there?"),
            ("proctorctl check --policy ./policy.d com.example.notes launch --app-version 2.2.0 --json",
             "Would version 2.2.0 be allowed to start under the policy in this checkout?"),
        ],
        run: run)

    /// The question the command line asks, checked.
    private struct Question {
        var app: String
        var action: Action
        var target: String?
        var size: Int?
        var appVersion: SemanticVersion?
    }

    static func run(_ arguments: ParsedArguments, context: CommandContext) throws(CommandFailure) -> ExitStatus {
        let question = try parse(arguments)
        if let path = arguments.value("--policy") {
            if arguments.value("--address") != nil {
                throw .usage(UsageError("--policy decides offline and --address asks proctord: give only one"))
            }
            return try decideOffline(question, policyPath: path, arguments: arguments, context: context)
        }
        let request = Admin.Decide.Request(appId: question.app, action: question.action, target: question.target,
                                           size: question.size, appVersion: question.appVersion)
        let answer = try AdminClient(arguments, context: context).call(Admin.Decide.self, request)
        let reply = try answer.message()
        let allowed = reply.allowed
        if arguments.has("--json") {
            context.console.print(answer.json.serializedString())
        } else {
            var fields = FieldList()
            fields.add("decision", allowed ? "allowed" : "denied")
            fields.add("rule", reply.rule)
            fields.add("reason", reply.reason)
            let steps = reply.explanation
            if !steps.isEmpty {
                fields.add("explanation", "")
                for (index, step) in steps.enumerated() { fields.addDetail("\(index + 1). \(step)") }
            }
            for line in fields.lines { context.console.print(line) }
        }
        return allowed ? .success : .denied
    }

    private static func parse(_ arguments: ParsedArguments) throws(CommandFailure) -> Question {
        let positionals = arguments.positionals
        guard let action = Action(rawValue: positionals[1]) else {
            var message = "unknown action \"\(positionals[1])\", expected one of "
                + Action.allCases.map(\.rawValue).joined(separator: ", ")
            if let suggestion = SpellingSuggestion.closest(to: positionals[1], in: Action.allCases.map(\.rawValue)) {
                message = "unknown action \"\(positionals[1])\", did you mean \"\(suggestion)\"?"
            }
            throw .usage(UsageError(message))
        }
        var question = Question(app: positionals[0], action: action, target: positionals.count > 2 ? positionals[2] : nil)
        if let text = arguments.value("--size") {
            guard let size = Int(text), size >= 0 else {
                throw .usage(UsageError("--size must be a whole number of characters, 0 or more; found \"\(text)\""))
            }
            question.size = size
        }
        if let text = arguments.value("--app-version") {
            guard let version = SemanticVersion(text) else {
                throw .usage(UsageError("--app-version must be a semantic version such as 2.4.0; found \"\(text)\""))
            }
            question.appVersion = version
        }
        return question
    }

    private static func decideOffline(_ question: Question, policyPath: String, arguments: ParsedArguments,
                                      context: CommandContext) throws(CommandFailure) -> ExitStatus {
        let policy = try PolicyInput.loadForCommand(policyPath).policy
        let decision = CompiledPolicy(policy).decide(DecisionRequest(
            app: question.app, action: question.action, target: question.target, size: question.size,
            appVersion: question.appVersion))
        if arguments.has("--json") {
            context.console.print(decision.json.serializedString())
        } else {
            var fields = FieldList()
            fields.add("decision", decision.allowed ? "allowed" : "denied")
            fields.add("rule", decision.rule)
            fields.add("reason", decision.reason)
            if let violation = decision.violation { fields.add("violation", violation.rawValue) }
            fields.add("policy", "version \(policy.version), sha256 \(policy.sha256) (offline, from \(policyPath))")
            for line in fields.lines { context.console.print(line) }
        }
        return decision.allowed ? .success : .denied
    }
}
