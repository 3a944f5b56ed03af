import JSONCore

/// JSON for people: two-space indentation, keys in the canonical (UTF-8 byte) order, so the
/// output of `policy show` is stable and diffs well. Scalars are written canonically.
enum PrettyJSON {
    static func format(_ value: JSONValue) -> String {
        var out = ""
        write(value, indent: 0, to: &out)
        return out
    }

    private static func write(_ value: JSONValue, indent: Int, to out: inout String) {
        let inner = String(repeating: "  ", count: indent + 1)
        let closing = String(repeating: "  ", count: indent)
        switch value {
        case .array(let elements) where !elements.isEmpty:
            out += "[\n"
            for (index, element) in elements.enumerated() {
                out += inner
                write(element, indent: indent + 1, to: &out)
                out += index == elements.count - 1 ? "\n" : ",\n"
            }
            out += closing + "]"
        case .object(let members) where !members.isEmpty:
            out += "{\n"
            let keys = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for (index, key) in keys.enumerated() {
                out += inner + JSONValue.string(key).serializedString() + ": "
                write(members[key]!, indent: indent + 1, to: &out)
                out += index == keys.count - 1 ? "\n" : ",\n"
            }
            out += closing + "}"
        default:
            out += value.serializedString()
        }
    }
}
