import JSONCore
import ProctorPolicy
import ProctorProtocol

/// Shell completion, answered from the command table: `proctorctl __complete INDEX WORD…`
/// prints what the word at INDEX of the command line `proctorctl WORD…` may become. The
/// bash, zsh and fish scripts in `completions/` only call it, so completion always knows
/// exactly the commands, options and values this proctorctl accepts.
///
/// The answer's first line is `words` or `files` (complete file names, then the shell's
/// own way); each further line is a candidate, with a tab and a description for the
/// shells that show one. Offering app ids asks proctord (`ListApps`); when it does not
/// answer, there are none, silently.
enum Completion {
    /// The hidden command word the scripts use; not in `--help`.
    static let command = "__complete"

    enum Candidates: Equatable {
        case words([Candidate])
        case files
    }

    struct Candidate: Equatable {
        var word: String
        var description: String?
    }

    /// What a placeholder of the command table (`APP`, `--size N`) is completed with.
    enum ValueKind {
        case appID, action, checkTarget, file, eventKind, outputFormat, none
    }

    /// Every placeholder the verbs use; a test checks none is missing.
    static let placeholders: [String: ValueKind] = [
        "APP": .appID, "ID": .appID, "ACTION": .action, "TARGET": .checkTarget, "PATH": .file, "FILE": .file, "PREFIX": .file,
        "K": .eventKind, "N": .none, "TIME": .none, "FORMAT": .outputFormat, "V": .none, "VERSION": .none, "JSON": .none,
        "DURATION": .none, "SECONDS": .none,
    ]

    static func run(_ arguments: [String], environment: [String: String], console: Console) -> ExitStatus {
        guard let indexText = arguments.first, let index = Int(indexText), index >= 0, index < arguments.count else {
            console.printError("proctorctl \(command): expected INDEX WORD… with INDEX the position of the word to complete")
            return .invalidInput
        }
        switch candidates(Array(arguments.dropFirst()), at: index, environment: environment) {
        case .files:
            console.print("files")
        case .words(let candidates):
            console.print("words")
            for candidate in candidates {
                console.print(candidate.word + (candidate.description.map { "\t" + $0 } ?? ""))
            }
        }
        return .success
    }

    /// What `words[index]` may become, its prefix already typed. Candidates are filtered by
    /// that prefix (the shells filter again; zsh and fish more loosely).
    static func candidates(_ words: [String], at index: Int, environment: [String: String]) -> Candidates {
        let typed = index < words.count ? words[index] : ""
        var state = LineState()
        for word in words.prefix(index) { state.read(word) }
        let result: Candidates
        if let placeholder = state.pendingValue {
            result = values(for: placeholder, state: state, environment: environment)
        } else if typed.hasPrefix("--"), let equals = typed.firstIndex(of: "="),
                  let spec = state.options.first(where: { $0.isNamed(typed[..<equals]) }), let valueName = spec.valueName {
            // `--kind=dec`: the option's values, each written after `--kind=`.
            guard case .words(let values) = values(for: valueName, state: state, environment: environment) else { return .files }
            result = .words(values.map { Candidate(word: spec.name + "=" + $0.word, description: $0.description) })
        } else if typed.hasPrefix("-") {
            result = .words(state.options.map { Candidate(word: $0.name, description: firstSentence($0.help)) })
        } else if let verb = state.verb {
            let synopsis = verb.argumentsSynopsis.split(separator: " ").map { $0.filter { $0 != "[" && $0 != "]" } }
            result = state.positionals.count < synopsis.count
                ? values(for: synopsis[state.positionals.count], state: state, environment: environment) : .words([])
        } else {
            result = .words(state.nextCommandWords)
        }
        guard case .words(let all) = result else { return result }
        return .words(all.filter { $0.word.hasPrefix(typed) })
    }

    private static func values(for placeholder: String, state: LineState, environment: [String: String]) -> Candidates {
        switch placeholders[placeholder] ?? .none {
        case .appID: .words(appIDs(state: state, environment: environment).map { Candidate(word: $0) })
        case .action: .words(Action.allCases.map { Candidate(word: $0.rawValue) })
        case .checkTarget: state.positionals.last == Action.fileExport.rawValue
            ? .files : values(for: "APP", state: state, environment: environment)
        case .file: .files
        case .eventKind: .words(EventsCommand.kinds.map { Candidate(word: $0) })
        case .outputFormat: .words(EventsCommand.outputFormats.map { Candidate(word: $0) })
        case .none: .words([])
        }
    }

    /// The ids proctord lists, asked at the address the command line or environment names;
    /// none when it does not answer within a second.
    private static func appIDs(state: LineState, environment: [String: String]) -> [String] {
        var arguments = ParsedArguments()
        if let address = state.address { arguments.values["--address"] = [address] }
        let context = CommandContext(console: Console(output: { _ in }, error: { _ in }), environment: environment)
        let client = try? AdminClient(arguments, context: context, timeout: .seconds(1))
        guard let apps = try? client?.call(Admin.ListApps.self).message().apps else { return [] }
        return apps.map(\.appId)
    }

    private static func firstSentence(_ text: String) -> String {
        let characters = Array(text)
        for index in characters.indices.dropLast() where characters[index] == "." && characters[index + 1] == " " {
            return String(characters[...index])
        }
        return text
    }

    /// What the words before the one being completed have said.
    private struct LineState {
        /// The command's words so far, or all of them once `verb` is found.
        var commandWords: [String] = []
        var verb: Verb?
        var positionals: [String] = []
        /// The placeholder of an option that waits for its value.
        var pendingValue: String?
        var pendingOption: String?
        var address: String?
        var optionsEnded = false

        /// The options valid where the next word stands.
        var options: [OptionSpec] {
            if let verb { return verb.options + [.flag("--help", help: "Show the command's manual.")] }
            return commandWords.isEmpty ? GlobalOptions.documented : []
        }

        var nextCommandWords: [Candidate] {
            if commandWords.first == "help" {
                let named = Array(commandWords.dropFirst())
                return Self.words(after: named)
            }
            var next = Self.words(after: commandWords)
            if commandWords.isEmpty { next.append(Candidate(word: "help", description: "show the manual of a command")) }
            return next
        }

        /// The words that may follow `prefix` in some verb's words, with a summary where
        /// the word completes a command.
        private static func words(after prefix: [String]) -> [Candidate] {
            var seen: Set<String> = []
            var candidates: [Candidate] = []
            for verb in ProctorCTL.verbs where verb.words.count > prefix.count && verb.words.starts(with: prefix) {
                let word = verb.words[prefix.count]
                guard seen.insert(word).inserted else { continue }
                candidates.append(Candidate(word: word, description: verb.words.count == prefix.count + 1 ? verb.summary : nil))
            }
            return candidates
        }

        mutating func read(_ word: String) {
            if let option = pendingOption {
                if option == "--address" { address = word }
                pendingOption = nil
                pendingValue = nil
                return
            }
            if !optionsEnded, word == "--" {
                optionsEnded = verb != nil
                return
            }
            if !optionsEnded, word.hasPrefix("-"), word != "-" {
                let name = String(word.prefix { $0 != "=" })
                if let spec = options.first(where: { $0.isNamed(name) }), let valueName = spec.valueName {
                    if let equals = word.firstIndex(of: "=") {
                        if name == "--address" { address = String(word[word.index(after: equals)...]) }
                    } else {
                        pendingOption = name
                        pendingValue = valueName
                    }
                }
                return
            }
            if verb != nil {
                positionals.append(word)
                return
            }
            commandWords.append(word)
            verb = ProctorCTL.verbs.first { $0.words == commandWords && commandWords.first != "help" }
        }
    }
}
