import ProctorProtocol

/// `proctorctl reload`: proctord re-reads its policy directory.
enum ReloadCommand {
    static let verb = Verb(
        words: ["reload"],
        summary: "make proctord re-read its policy directory",
        argumentsSynopsis: "",
        positionalCount: 0...0,
        options: AdminClient.options(),
        description: [
            "Asks proctord (io.proctor.Admin.Reload) to read its policy.d directory again, as 'systemctl reload proctord' "
                + "does. A valid policy is swapped in at once, between two requests, and the apps it affects are told. "
                + "An invalid one changes nothing: the policy in force stays, and its problems are printed here on "
                + "standard error and shown by 'proctorctl status'.",
            "proctord also re-reads proctord.conf and keys.d (an invalid file keeps the settings in force and is shown "
                + "as the last error in 'proctorctl status') and polls its BundleURL= at once.",
            "Prints the version and sha256 in force afterwards and its sources.",
        ],
        exitStatuses: AdminClient.exitStatuses(
            success: "The directory was read and its policy is in force.",
            invalidInput: "The policy directory has problems (the policy in force did not change), or the command "
                + "line is wrong."),
        examples: [
            ("proctorctl reload", "Apply the edits made to /etc/proctor/policy.d."),
            ("proctorctl policy validate /etc/proctor/policy.d && proctorctl reload", "Check the directory first."),
        ],
        run: run)

    static func run(_ arguments: ParsedArguments, context: CommandContext) throws(CommandFailure) -> ExitStatus {
        let answer = try AdminClient(arguments, context: context).call(Admin.Reload.self)
        let reply = try answer.message()
        if arguments.has("--json") {
            context.console.print(answer.json.serializedString())
            return reply.result.ok ? .success : .invalidInput
        }
        let inForce = "version \(reply.policy.version), sha256 \(reply.policy.sha256)"
        guard reply.result.ok else {
            let problems = reply.result.problems
            context.console.printError("proctorctl reload: the policy directory has \(problems.count) "
                + "problem\(problems.count == 1 ? "" : "s"); still in force: \(inForce)")
            for problem in problems {
                context.console.printError("  \(problem.path): \(problem.message)")
            }
            return .invalidInput
        }
        context.console.print("reloaded: \(inForce), from \(reply.policy.sources.joined(separator: ", "))")
        return .success
    }
}
