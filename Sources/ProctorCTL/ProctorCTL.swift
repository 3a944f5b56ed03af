import JSONCore
import ProctorPolicy

/// proctorctl's logic: the table of commands and the dispatcher that parses a command
/// line, finds the command, and runs it or prints its manual.
public enum ProctorCTL {
    /// Every command, in the order the overview lists them.
    public static let verbs: [Verb] = [
        StatusCommand.verb, AppsCommand.listVerb, AppsCommand.showVerb,
        PolicyCommands.showVerb, PolicyValidateCommand.verb, PolicyCommands.diffVerb, PolicyCommands.applyVerb,
        PolicyCommands.historyVerb, PolicyCommands.rollbackVerb, PolicySigningCommands.keygenVerb,
        PolicySigningCommands.signVerb, ReloadCommand.verb, CheckCommand.verb,
        WipeCommand.verb, NotifyCommand.verb, EventsCommand.verb, MetricsCommand.verb,
    ]

    /// Runs the command line `arguments` (without the program name) in `environment`,
    /// writing only to `console`, and returns the exit status.
    public static func run(_ arguments: [String], environment: [String: String] = [:], console: Console) -> ExitStatus {
        if arguments.first == Completion.command {
            return Completion.run(Array(arguments.dropFirst()), environment: environment, console: console)
        }
        let global: GlobalOptions
        let verb: Verb
        do throws(UsageError) {
            global = try GlobalOptions.split(arguments)
            switch global.request {
            case .runCommand: break
            case .overview:
                console.print(overview)
                return .success
            case .version:
                console.print("proctorctl \(ProctorRelease.version)")
                return .success
            case .manualReference:
                console.print(ManualPage.reference)
                return .success
            }
            guard let first = global.command.first else {
                if arguments.isEmpty {
                    console.printError(overview)
                    return .invalidInput
                }
                throw UsageError("a command must follow the options")
            }
            if first == "help" { return help(Array(global.command.dropFirst()), console: console) }
            verb = try find(global.command)
        } catch {
            console.printError("proctorctl: \(error.message)")
            console.printError("Try 'proctorctl --help'.")
            return .invalidInput
        }
        var parsed = ParsedArguments()
        do throws(CommandFailure) {
            do throws(UsageError) {
                // Options given before the command count as if written right after its words.
                parsed = try ParsedArguments.parse(global.forwarded + global.command.dropFirst(verb.words.count),
                                                   options: verb.options)
                if parsed.wantsHelp {
                    console.print(verb.manual)
                    return .success
                }
                guard verb.positionalCount.contains(parsed.positionals.count) else {
                    throw UsageError(positionalCountMessage(verb, given: parsed.positionals.count))
                }
            } catch {
                throw .usage(error)
            }
            return try verb.run(parsed, CommandContext(console: console, environment: environment))
        } catch {
            report(error, of: verb, json: parsed.has("--json"), console: console)
            return error.exitStatus
        }
    }

    private static func report(_ failure: CommandFailure, of verb: Verb, json: Bool, console: Console) {
        switch failure {
        case .usage(let error):
            console.printError("\(verb.commandLine): \(error.message)")
            console.printError("Usage: \(verb.synopsis)")
            console.printError("Try '\(verb.commandLine) --help'.")
        case .invalidInput(let lines):
            for line in lines { console.printError(line) }
        case .daemonUnreachable(let address, let reason):
            if let reason {
                console.printError("proctorctl: cannot talk to proctord at \(address): \(reason)")
            } else {
                console.printError("proctorctl: proctord is not running at \(address)")
            }
        case .daemonRefused(let error):
            // Scripts asking for JSON get the error as JSON too, on standard output.
            if json {
                console.print(JSONValue.object(["error": .string(error.name), "parameters": .object(error.parameters)])
                    .serializedString())
            }
            let lines = DaemonRefusal.lines(for: error)
            console.printError("\(verb.commandLine): " + lines[0])
            for line in lines.dropFirst() { console.printError(line) }
        }
    }

    /// The overview printed by `proctorctl --help`.
    public static var overview: String {
        let names = verbs.map { ($0.words.joined(separator: " ") + " " + $0.argumentsSynopsis).trimmingTrailingSpace }
        let width = (names + ["help [COMMAND]"]).map(\.count).max() ?? 0
        var lines = [
            "proctorctl - inspect and steer Proctor, the policy agent for managed Linux apps",
            "",
            "Usage: proctorctl [OPTIONS] COMMAND [OPTIONS] [ARGUMENTS]",
            "",
            "Commands:",
        ]
        for (name, verb) in zip(names, verbs) { lines.append("  " + name.padded(to: width) + "  " + verb.summary) }
        lines.append("  " + "help [COMMAND]".padded(to: width) + "  show the manual of a command")
        lines += ["", "Options:"]
        for option in GlobalOptions.documented {
            let name = option.name + (option.valueName.map { " " + $0 } ?? "")
            lines += TextWrapping.wrap(option.help, indent: width + 4, firstLinePrefix: "  " + name.padded(to: width) + "  ")
        }
        lines.append("")
        lines += TextWrapping.wrap("The online commands take --address and --json before or after the command; every "
            + "command takes --help. Exit status: "
            + ExitStatus.allCases.map { "\($0.rawValue) \($0.meaning)" }.joined(separator: ", ") + ".", indent: 0)
        return lines.joined(separator: "\n")
    }

    private static func help(_ words: [String], console: Console) -> ExitStatus {
        if words.isEmpty {
            console.print(overview)
            return .success
        }
        if let verb = verbs.first(where: { $0.words == words }) {
            console.print(verb.manual)
            return .success
        }
        do {
            _ = try find(words)
            console.printError("proctorctl help: give only the command's words, such as 'proctorctl help policy validate'")
        } catch {
            console.printError("proctorctl help: \(error.message)")
        }
        return .invalidInput
    }

    /// The verb whose words begin `arguments`.
    private static func find(_ arguments: [String]) throws(UsageError) -> Verb {
        if let verb = verbs.filter({ arguments.starts(with: $0.words) }).max(by: { $0.words.count < $1.words.count }) {
            return verb
        }
        // Find how far the words match, to say which word is wrong.
        var prefix: [String] = []
        for word in arguments {
            guard verbs.contains(where: { $0.words.starts(with: prefix + [word]) }) else { break }
            prefix.append(word)
        }
        let candidates = Set(verbs.filter { $0.words.starts(with: prefix) && $0.words.count > prefix.count }
            .map { $0.words[prefix.count] }).sorted()
        let context = prefix.isEmpty ? "" : prefix.joined(separator: " ") + " "
        guard prefix.count < arguments.count, !arguments[prefix.count].hasPrefix("-") else {
            return try fail("'\(context.trimmingTrailingSpace)' needs a subcommand: \(candidates.joined(separator: ", "))")
        }
        let word = arguments[prefix.count]
        var message = "unknown command '\(context)\(word)'"
        if let suggestion = SpellingSuggestion.closest(to: word, in: candidates) {
            message += ", did you mean '\(context)\(suggestion)'?"
        } else {
            message += "; commands: \(candidates.map { context + $0 }.joined(separator: ", "))"
        }
        return try fail(message)
    }

    private static func fail(_ message: String) throws(UsageError) -> Verb { throw UsageError(message) }

    private static func positionalCountMessage(_ verb: Verb, given: Int) -> String {
        let range = verb.positionalCount
        let expected = range.lowerBound == range.upperBound ? "\(range.lowerBound)" : "\(range.lowerBound) to \(range.upperBound)"
        return "expected \(expected) argument\(range.upperBound == 1 ? "" : "s") (\(verb.argumentsSynopsis)), found \(given)"
    }
}

extension String {
    fileprivate var trimmingTrailingSpace: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }

    fileprivate func padded(to width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
}
