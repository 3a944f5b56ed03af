/// The options that may stand before the command, as systemctl and git accept them
/// (`proctorctl --json status`, `proctorctl --address P apps`): proctorctl's own
/// (`--help`, `--version`) and those of the online commands, which are handed to the
/// command as if written right after its words.
struct GlobalOptions {
    /// What the options before the command ask for besides running it.
    enum Request: Equatable {
        case runCommand
        case overview
        case version
        /// `--generate man`: proctorctl(1)'s sections from the command table, for the build
        /// (`scripts/build-man.sh`); not in `--help`.
        case manualReference
    }

    /// The options the overview and proctorctl(1) list (`--help` is parsed as every
    /// command's is); the short forms are in `aliases`.
    static let documented: [OptionSpec] = [
        AdminClient.addressOption,
        .flag("--json", help: "Print machine-readable JSON, as the command's own --json does."),
        .flag("--version", help: "Print proctorctl's version and exit (also -V)."),
        .flag("--help", help: "Print the list of commands and exit (also -h)."),
    ]
    static let aliases = ["-V": "--version"]
    private static let parsed = documented.filter { $0.name != "--help" } + [.value("--generate", "WHAT", help: "")]

    var request = Request.runCommand
    /// Options to hand to the command, in the command's own syntax.
    var forwarded: [String] = []
    /// The command's words and everything after them.
    var command: [String] = []

    /// Splits `arguments` into the options before the command and the rest.
    static func split(_ arguments: [String]) throws(UsageError) -> GlobalOptions {
        let given = try ParsedArguments.parse(arguments.map { aliases[$0] ?? $0 }, options: parsed, stopAtPositional: true)
        // The command and what follows it, as given: an alias is only one before the command.
        var options = GlobalOptions(command: Array(arguments.suffix(given.positionals.count)))
        if given.has("--json") { options.forwarded.append("--json") }
        if let address = given.value("--address") { options.forwarded += ["--address", address] }
        if given.wantsHelp {
            options.request = .overview
        } else if given.has("--version") {
            options.request = .version
        } else if let what = given.value("--generate") {
            guard what == "man" else { throw UsageError("--generate makes man, not \"\(what)\"") }
            options.request = .manualReference
        }
        return options
    }
}
