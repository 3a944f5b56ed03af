/// The sections of proctorctl(1) that come from the command table, in scdoc:
/// `proctorctl --generate man` prints them and `scripts/build-man.sh` splices them into
/// `man/proctorctl.1.scd`, so the manual page lists exactly the commands and options that
/// `--help` does.
enum ManualPage {
    /// The OPTIONS and COMMANDS sections.
    static var reference: String {
        var lines = ["# OPTIONS", "",
                     "These may stand before the command. *--address* and *--json* may as well stand after it, "
                        + "where every online command takes them.", ""]
        for option in GlobalOptions.documented { lines += entry(option) }
        lines += ["# COMMANDS", "", "Every command takes *--help* (also *-h*), which prints its manual.", ""]
        for verb in ProctorCTL.verbs { lines += section(verb) }
        return lines.joined(separator: "\n")
    }

    private static func section(_ verb: Verb) -> [String] {
        var lines = ["## " + escape(verb.words.joined(separator: " ")), ""]
        var synopsis = ["*\(escape(verb.commandLine))*"]
        synopsis += verb.options.map { "[" + term($0) + "]" }
        synopsis += verb.argumentsSynopsis.split(separator: " ").map { placeholder(String($0)) }
        lines += [synopsis.joined(separator: " "), ""]
        for paragraph in verb.description { lines += [escape(paragraph), ""] }
        for option in verb.options { lines += entry(option) }
        lines += ["Exit status:", ""]
        for (status, meaning) in verb.exitStatuses { lines += ["- *\(status.rawValue)* " + escape(meaning)] }
        lines += ["", "Examples:", ""]
        // Explanation first, then the command as a literal block that is never hyphenated.
        for example in verb.examples {
            lines += ["\t" + escape(example.explanation), "", "\t```", "\t" + example.command, "\t```", ""]
        }
        return lines
    }

    private static func entry(_ option: OptionSpec) -> [String] {
        [term(option), "\t" + escape(option.help), ""]
    }

    /// `*--size* _N_`
    private static func term(_ option: OptionSpec) -> String {
        (option.shortName.map { "*" + escape($0) + "*, " } ?? "") + "*" + escape(option.name) + "*"
            + (option.valueName.map { " _" + escape($0) + "_" } ?? "")
    }

    /// `[TARGET]` as `[_TARGET_]`: the brackets plain, the name underlined.
    private static func placeholder(_ word: String) -> String {
        let opening = word.prefix { $0 == "[" }
        let closing = String(word.reversed().prefix { $0 == "]" })
        let name = String(word.dropFirst(opening.count).dropLast(closing.count))
        return opening + "_" + escape(name) + "_" + closing
    }

    /// Text with scdoc's formatting characters taken literally.
    static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if character == "\\" || character == "*" || character == "_" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }
}
