import ProctorPolicy

/// An option a verb accepts: a flag (`--json`) or an option with a value (`--size N`,
/// also written `--size=N`).
public struct OptionSpec: Sendable, Hashable {
    /// The long name with its dashes, `--json`.
    public var name: String
    /// The placeholder of the value in the manual (`N`), or nil for a flag.
    public var valueName: String?
    /// What the option does, for the manual.
    public var help: String
    /// A one-letter spelling, `-n` for `--lines`, parsed as the long name.
    public var shortName: String?

    public static func flag(_ name: String, short: String? = nil, help: String) -> OptionSpec {
        OptionSpec(name: name, valueName: nil, help: help, shortName: short)
    }

    public static func value(_ name: String, _ valueName: String, short: String? = nil, help: String) -> OptionSpec {
        OptionSpec(name: name, valueName: valueName, help: help, shortName: short)
    }

    /// `-n, --lines` or `--lines`, as manuals show it.
    public var spellings: String { (shortName.map { $0 + ", " } ?? "") + name }

    /// Whether `word` (without any `=VALUE`) names this option.
    public func isNamed(_ word: some StringProtocol) -> Bool { word == name || (shortName.map { word == $0 } ?? false) }
}

/// A mistake in how a command was invoked: printed with a pointer to `--help`, exit 2.
public struct UsageError: Error, Sendable, Hashable {
    public var message: String
    public init(_ message: String) { self.message = message }
}

/// A verb's arguments after parsing: which flags were given, the options' values and the
/// positional arguments in order.
public struct ParsedArguments: Sendable, Hashable {
    public var flags: Set<String> = []
    /// Every value given to each option, in order (an option may be repeated).
    public var values: [String: [String]] = [:]
    public var positionals: [String] = []
    /// `--help` or `-h` was given: show the manual, do nothing else.
    public var wantsHelp = false

    public func has(_ flag: String) -> Bool { flags.contains(flag) }

    /// The value given last to `option`: a repeated option overrides earlier ones.
    public func value(_ option: String) -> String? { values[option]?.last }

    /// Every value given to `option`, in order.
    public func allValues(_ option: String) -> [String] { values[option] ?? [] }

    /// Parses `arguments` against `options`. `--` ends the options; a lone `-` is a
    /// positional argument (conventionally standard input). With `stopAtPositional` the
    /// first positional argument ends the parse, and it and all after it are `positionals`
    /// as given (how proctorctl reads the options before a command).
    public static func parse(_ arguments: [String], options: [OptionSpec],
                             stopAtPositional: Bool = false) throws(UsageError) -> ParsedArguments {
        var parsed = ParsedArguments()
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || !argument.hasPrefix("-") || argument == "-" {
                if stopAtPositional {
                    parsed.positionals += arguments[(index - 1)...]
                    return parsed
                }
                parsed.positionals.append(argument)
                continue
            }
            if argument == "--" { optionsEnded = true; continue }
            if argument == "--help" || argument == "-h" { parsed.wantsHelp = true; continue }
            let name: String
            var attached: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                attached = String(argument[argument.index(after: equals)...])
            } else {
                name = argument
            }
            guard let spec = options.first(where: { $0.isNamed(name) }) else {
                var message = "unknown option \"\(name)\""
                if let suggestion = SpellingSuggestion.closest(to: name, in: options.map(\.name) + ["--help"]) {
                    message += ", did you mean \"\(suggestion)\"?"
                }
                throw UsageError(message)
            }
            guard let valueName = spec.valueName else {
                if attached != nil { throw UsageError("option \(name) takes no value") }
                parsed.flags.insert(spec.name)
                continue
            }
            if let attached {
                parsed.values[spec.name, default: []].append(attached)
            } else {
                guard index < arguments.count else { throw UsageError("option \(name) needs a value: \(name) \(valueName)") }
                parsed.values[spec.name, default: []].append(arguments[index])
                index += 1
            }
        }
        return parsed
    }
}
