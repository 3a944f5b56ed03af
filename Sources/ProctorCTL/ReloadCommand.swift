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
            "Prints the version and sha256 in force afterwards and its sources.",
        ],
        exitStatuses: [
            (.success, "The directory was read and its policy is in force."),
            (.invalidInput, "The policy directory has problems (the policy in force did not change), or the command "
                + "line is wrong."),
            (.daemonUnreachable, "proctord is not running at the address, or the exchange failed."),
            (.daemonRefused, "proctord refused, such as permission denied."),
        ],
        examples: [
            ("proctorctl reload", "Apply the edits made to /etc/proctor/policy.d."),
            ("proctorctl policy validate /etc/proctor/policy.d && proctorctl reload", "Check the directory first."),
        ],
        run: run)

    static func run(_ arguments: ParsedArguments, context: CommandContext) throws(CommandFailure) -> ExitStatus {
        let reply = try AdminClient(arguments, context: context).call("Reload")
        let result = try reply.object("result")
        let policy = try reply.object("policy")
        let ok = try result.bool("ok")
        if arguments.has("--json") {
            context.console.print(reply.value.serializedString())
            return ok ? .success : .invalidInput
        }
        let inForce = "version \(try policy.string("version")), sha256 \(try policy.string("sha256"))"
        guard ok else {
            let problems = try result.array("problems")
            context.console.printError("proctorctl reload: the policy directory has \(problems.count) "
                + "problem\(problems.count == 1 ? "" : "s"); still in force: \(inForce)")
            for problem in problems {
                context.console.printError("  \(try problem.string("path")): \(try problem.string("message"))")
            }
            return .invalidInput
        }
        context.console.print("reloaded: \(inForce), from \(try policy.strings("sources").joined(separator: ", "))")
        return .success
    }
}
