import JSONCore
import ProctorPolicy

/// `proctorctl policy validate PATH`: checks a policy file or directory offline, exactly
/// as proctord would read it.
enum PolicyValidateCommand {
    static let verb = Verb(
        words: ["policy", "validate"],
        summary: "check a policy file or directory offline",
        argumentsSynopsis: "PATH",
        positionalCount: 1...1,
        options: [
            .flag("--json", help: "Print the problems as a JSON array of objects with the keys source, path, line, column "
                + "and message on standard output ([] when the policy is valid), and nothing else."),
            .flag("--fragment", help: "Treat a file PATH as one drop-in of a policy directory, which need not name a version. "
                + "Without it a file must be a complete policy, as 'policy apply' sends."),
        ],
        description: [
            "Reads PATH as proctord would and reports every problem at once. A directory is read like /etc/proctor/policy.d: "
                + "its *.json files that are not dotfiles, in byte-wise lexical order of their names, merged: each setting under "
                + "\"defaults\" comes from the last file that says it, and an app entry in a later file replaces that app's whole "
                + "entry. A file is read as a complete policy (schema 1 and a version); PATH - reads one from standard input.",
            "Each problem is one line on standard error: FILE:LINE:COLUMN: JSON.PATH: what was found and what is allowed. "
                + "A valid policy prints one line: its version, the sha256 of its canonical form (the identity proctord reports), "
                + "the number of apps and the files read.",
            "Nothing is sent to proctord: this works on machines without it, such as a configuration-management server.",
        ],
        exitStatuses: [
            (.success, "The policy is valid."),
            (.invalidInput, "The policy has problems, PATH cannot be read, or the command line is wrong."),
        ],
        examples: [
            ("proctorctl policy validate /etc/proctor/policy.d", "Check the policy directory proctord reads."),
            ("proctorctl policy validate --fragment 20-mail.json", "Check one drop-in before copying it into policy.d."),
            ("proctorctl policy validate --json bundle.json | jq -r '.[].message'",
             "Check a bundle before 'proctorctl policy apply' and list the messages."),
            ("mdm-export --host desk-42 | proctorctl policy validate -", "Check a policy another program writes."),
        ],
        run: { arguments, context in run(arguments, context: context) })

    static func run(_ arguments: ParsedArguments, context: CommandContext) -> ExitStatus {
        let console = context.console
        let path = arguments.positionals[0]
        let json = arguments.has("--json")
        do {
            let summary = try validate(path, asFragment: arguments.has("--fragment"))
            console.print(json ? "[]" : "valid: \(summary)")
            return .success
        } catch {
            if json {
                console.print(error.json.serializedString())
            } else {
                for problem in error.problems { console.printError(problem.description) }
            }
            return .invalidInput
        }
    }

    /// A one-line summary of the valid policy at `path`.
    private static func validate(_ path: String, asFragment: Bool) throws(PolicyProblems) -> String {
        if asFragment, !PolicyInput.isDirectory(path) {
            let (bytes, source) = try PolicyInput.readFile(path)
            let fragment = try PolicyFragment.parse(bytes, source: source)
            return "drop-in, version \(fragment.version ?? "not set"), \(appCount(fragment.apps.count)), source \(source)"
        }
        let loaded = try PolicyInput.load(path)
        return describe(loaded.policy, sources: loaded.sources)
    }

    private static func describe(_ policy: Policy, sources: [String]) -> String {
        "version \(policy.version), sha256 \(policy.sha256), \(appCount(policy.apps.count)), "
            + "source\(sources.count == 1 ? "" : "s") \(sources.joined(separator: ", "))"
    }

    private static func appCount(_ count: Int) -> String { count == 1 ? "1 app" : "\(count) apps" }
}
