import JSONCore

/// A JSON value as the list of its settings: every value that is not a non-empty object,
/// with its path. Arrays are settings of their own (policy lists such as `share.exempt`
/// are replaced whole), so they are not split.
enum JSONLeaves {
    static func of(_ value: JSONValue, at path: JSONPath = .root) -> [(path: JSONPath, value: JSONValue)] {
        guard case .object(let members) = value, !members.isEmpty else { return [(path, value)] }
        return members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            .flatMap { of(members[$0]!, at: path.appending($0)) }
    }

    /// `path: value` lines, strings without quotes, for readable output.
    static func lines(_ value: JSONValue) -> [String] {
        guard case .object(let members) = value, !members.isEmpty else { return [] }
        return of(value).map { "\($0.path): \($0.value.stringValue ?? $0.value.serializedString())" }
    }
}
