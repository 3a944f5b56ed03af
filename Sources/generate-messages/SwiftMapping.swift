/// The Swift side of the interfaces: what their text cannot say, one directive a line (the
/// file's own header comment lists them). Kept out of the `.varlink` comments, which clients
/// read through `GetInterfaceDescription`.
struct SwiftMapping {
    /// One directive's words and where it stands.
    struct Directive {
        var words: [String]
        var line: Int
    }

    /// What the mapping says about one interface.
    struct Interface {
        var name: String
        var line: Int
        /// The enum the interface's types and methods nest in (`Agent`).
        var namespace: String
        /// The protocol its methods conform to (`AgentMethod`).
        var methodProtocol: String
        /// Varlink type name → existing Swift type, not generated.
        var uses: [String: Directive] = [:]
        /// `Message.field` → Swift type richer than the field's Varlink type.
        var fieldTypes: [(path: String, swiftType: String, line: Int)] = []
        var shared: [(name: String, members: [String], line: Int)] = []
        var groups: [(name: String, property: String, members: [String], fields: [String], line: Int)] = []
        /// `Message.field` kept equal to another field of the message.
        var mirrors: [(path: String, source: String, line: Int)] = []
    }

    let path: String
    var imports: [String] = []
    var interfaces: [String: Interface] = [:]

    init(path: String, text: String) throws(GenerationError) {
        self.path = path
        var current: Interface?
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = index + 1
            let content = rawLine.prefix { $0 != "#" }
            let words = content.split(whereSeparator: \.isWhitespace).map(String.init)
            guard let keyword = words.first else { continue }
            func fail(_ message: String) -> GenerationError { GenerationError(path: path, line: line, message: message) }
            func arguments(_ count: Int, _ form: String) throws(GenerationError) {
                guard words.count == count + 1 else { throw fail("`\(keyword)` takes \(count) words: `\(form)`") }
            }
            if keyword == "import" {
                try arguments(1, "import MODULE")
                imports.append(words[1])
                continue
            }
            if keyword == "interface" {
                try arguments(3, "interface NAME SWIFT-NAMESPACE METHOD-PROTOCOL")
                if let current { interfaces[current.name] = current }
                guard interfaces[words[1]] == nil else { throw fail("interface \(words[1]) is mapped twice") }
                current = Interface(name: words[1], line: line, namespace: words[2], methodProtocol: words[3])
                continue
            }
            guard var interface = current else { throw fail("`\(keyword)` before any `interface NAME …` line") }
            switch keyword {
            case "use":
                try arguments(2, "use TYPE SWIFT-TYPE")
                interface.uses[words[1]] = Directive(words: words, line: line)
            case "field":
                try arguments(2, "field MESSAGE.FIELD SWIFT-TYPE")
                interface.fieldTypes.append((words[1], words[2], line))
            case "shared":
                guard words.count >= 4 else { throw fail("`shared` takes a name and two messages or more: `shared NAME M.Request M.Request…`") }
                interface.shared.append((words[1], Array(words[2...]), line))
            case "group":
                guard words.count >= 7, words[3] == "in", let colon = words.firstIndex(of: ":"), colon > 4, colon < words.count - 1 else {
                    throw fail("`group` takes `group NAME PROPERTY in MESSAGE… : FIELD…`")
                }
                interface.groups.append((words[1], words[2], Array(words[4..<colon]), Array(words[(colon + 1)...]), line))
            case "mirror":
                try arguments(2, "mirror MESSAGE.FIELD SOURCE-FIELD")
                interface.mirrors.append((words[1], words[2], line))
            default:
                throw fail("unknown directive `\(keyword)`; expected import, interface, use, field, shared, group or mirror")
            }
            current = interface
        }
        if let current { interfaces[current.name] = current }
    }
}
