/// One proctorctl command (`policy validate`): its words, its manual, the options and
/// arguments it takes, and what it does. Adding a command is adding a `Verb` to
/// `ProctorCTL.verbs`; parsing, `--help`, `help VERB` and usage errors come with it.
public struct Verb: Sendable {
    /// The words that name the command, `["policy", "validate"]`.
    public var words: [String]
    /// One line for the command list.
    public var summary: String
    /// The positional arguments as the synopsis shows them, `PATH` or `APP ACTION [TARGET]`.
    public var argumentsSynopsis: String
    /// How many positional arguments are allowed.
    public var positionalCount: ClosedRange<Int>
    public var options: [OptionSpec]
    /// Paragraphs of the DESCRIPTION section.
    public var description: [String]
    /// Exit statuses the command uses, with what each means for it.
    public var exitStatuses: [(ExitStatus, String)]
    /// Command lines with a sentence on what each does.
    public var examples: [(command: String, explanation: String)]
    /// Runs the command on parsed arguments whose count and options are already checked.
    public var run: @Sendable (ParsedArguments, CommandContext) throws(CommandFailure) -> ExitStatus

    public init(words: [String], summary: String, argumentsSynopsis: String, positionalCount: ClosedRange<Int>,
                options: [OptionSpec], description: [String], exitStatuses: [(ExitStatus, String)],
                examples: [(command: String, explanation: String)],
                run: @escaping @Sendable (ParsedArguments, CommandContext) throws(CommandFailure) -> ExitStatus) {
        self.words = words
        self.summary = summary
        self.argumentsSynopsis = argumentsSynopsis
        self.positionalCount = positionalCount
        self.options = options
        self.description = description
        self.exitStatuses = exitStatuses
        self.examples = examples
        self.run = run
    }

    /// `proctorctl policy validate`.
    public var commandLine: String { (["proctorctl"] + words).joined(separator: " ") }

    /// `proctorctl policy validate [--json] [--fragment] PATH`.
    public var synopsis: String { synopsisParts.joined(separator: " ") }

    /// The synopsis in pieces that a line break may not split: `[--size N]` stays whole.
    private var synopsisParts: [String] {
        var parts = [commandLine]
        for option in options { parts.append("[" + option.name + (option.valueName.map { " " + $0 } ?? "") + "]") }
        if !argumentsSynopsis.isEmpty { parts.append(argumentsSynopsis) }
        return parts
    }

    /// The manual page shown by `--help` and `proctorctl help`: NAME, SYNOPSIS,
    /// DESCRIPTION, OPTIONS, EXIT STATUS, EXAMPLES.
    public var manual: String {
        var lines = ["NAME", "    \(commandLine) - \(summary)", "", "SYNOPSIS"]
        lines += TextWrapping.wrap(words: synopsisParts, indent: 8, firstLinePrefix: "    ")
        lines += ["", "DESCRIPTION"]
        for (index, paragraph) in description.enumerated() {
            if index > 0 { lines.append("") }
            lines += TextWrapping.wrap(paragraph, indent: 4)
        }
        lines += ["", "OPTIONS"]
        for option in options + [.flag("--help", help: "Show this manual and exit (also -h).")] {
            lines.append("    " + option.spellings + (option.valueName.map { " " + $0 } ?? ""))
            lines += TextWrapping.wrap(option.help, indent: 8)
        }
        lines += ["", "EXIT STATUS"]
        for (status, meaning) in exitStatuses {
            lines += TextWrapping.wrap(meaning, indent: 8, firstLinePrefix: "    \(status.rawValue)   ")
        }
        lines += ["", "EXAMPLES"]
        for (index, example) in examples.enumerated() {
            if index > 0 { lines.append("") }
            lines.append("    $ " + example.command)
            lines += TextWrapping.wrap(example.explanation, indent: 8)
        }
        return lines.joined(separator: "\n")
    }
}

/// Word wrapping for manuals at 80 columns.
enum TextWrapping {
    static let width = 80

    static func wrap(_ text: String, indent: Int, firstLinePrefix: String? = nil) -> [String] {
        wrap(words: text.split(separator: " ").map(String.init), indent: indent, firstLinePrefix: firstLinePrefix)
    }

    /// Lines of `words` separated by single spaces, a line broken only between words.
    static func wrap(words: [String], indent: Int, firstLinePrefix: String? = nil) -> [String] {
        let padding = String(repeating: " ", count: indent)
        var lines: [String] = []
        var line = firstLinePrefix ?? padding
        var lineIsEmpty = true
        for word in words {
            if !lineIsEmpty, line.count + 1 + word.count > width {
                lines.append(line)
                line = padding
                lineIsEmpty = true
            }
            line += (lineIsEmpty ? "" : " ") + word
            lineIsEmpty = false
        }
        lines.append(line)
        return lines
    }
}
