import JSONCore
import ProctorPolicy

/// What applying `proposed` over `current` would change, setting by setting, computed on
/// the canonical forms (so key order, spacing and the split into drop-ins never show).
struct PolicyDiff {
    /// One setting that differs; nil on a side where it is not set.
    struct Change {
        var path: String
        var current: JSONValue?
        var proposed: JSONValue?
    }

    var current: Policy
    var proposed: Policy
    var appsAdded: [AppID]
    var appsRemoved: [AppID]
    /// Apps in both whose entries differ.
    var appsChanged: [AppID]
    /// The differing settings under `defaults` and in the changed apps, by path.
    var changes: [Change]

    init(current: Policy, proposed: Policy) {
        self.current = current
        self.proposed = proposed
        func sorted(_ ids: some Sequence<AppID>) -> [AppID] { ids.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) } }
        appsAdded = sorted(proposed.apps.keys.filter { current.apps[$0] == nil })
        appsRemoved = sorted(current.apps.keys.filter { proposed.apps[$0] == nil })
        let shared = sorted(current.apps.keys.filter { proposed.apps[$0] != nil })
        let currentJSON = current.canonicalJSON
        let proposedJSON = proposed.canonicalJSON
        var changes = Self.changes(currentJSON["defaults"], proposedJSON["defaults"], at: JSONPath.root.appending("defaults"))
        var appsChanged: [AppID] = []
        for app in shared {
            let appChanges = Self.changes(currentJSON["apps"]?[app], proposedJSON["apps"]?[app],
                                          at: JSONPath.root.appending("apps").appending(app))
            if !appChanges.isEmpty { appsChanged.append(app) }
            changes += appChanges
        }
        self.appsChanged = appsChanged
        self.changes = changes
    }

    /// The two policies are the same (same canonical form, hence the same sha256).
    var isEmpty: Bool { current.canonicalBytes == proposed.canonicalBytes }

    /// By bytes, as the canonical form and the sha256: a path or value respelt in another Unicode
    /// form (an executable "/opt/cafe\u{301}" for "/opt/caf\u{E9}": another file) is a change,
    /// though `String`'s `==` and `[String: …]` keys find the two spellings equal.
    private static func changes(_ before: JSONValue?, _ after: JSONValue?, at path: JSONPath) -> [Change] {
        func settings(_ value: JSONValue?) -> [[UInt8]: (path: String, value: JSONValue)] {
            guard let value else { return [:] }
            var byPath: [[UInt8]: (path: String, value: JSONValue)] = [:]
            for leaf in JSONLeaves.of(value, at: path) {
                let description = leaf.path.description
                byPath[Array(description.utf8)] = (description, leaf.value)
            }
            return byPath
        }
        let old = settings(before)
        let new = settings(after)
        return Set(old.keys).union(new.keys).sorted { $0.lexicographicallyPrecedes($1) }.compactMap { key in
            let (was, now) = (old[key], new[key])
            if let was, let now, was.value.hasSameBytes(as: now.value) { return nil }
            return Change(path: (was ?? now)!.path, current: was?.value, proposed: now?.value)
        }
    }

    var json: JSONValue {
        func side(_ policy: Policy) -> JSONValue { ["version": .string(policy.version), "sha256": .string(policy.sha256)] }
        return [
            "identical": .bool(isEmpty),
            "current": side(current),
            "proposed": side(proposed),
            "appsAdded": .array(appsAdded.map(JSONValue.string)),
            "appsRemoved": .array(appsRemoved.map(JSONValue.string)),
            "appsChanged": .array(appsChanged.map(JSONValue.string)),
            "changes": .array(changes.map { change in
                var members: [String: JSONValue] = ["path": .string(change.path)]
                if let current = change.current { members["current"] = current }
                if let proposed = change.proposed { members["proposed"] = proposed }
                return .object(members)
            }),
        ]
    }

    /// The readable report; `proposedName` names the file the proposed policy came from.
    func lines(proposedName: String) -> [String] {
        guard !isEmpty else {
            return ["no difference: \(proposedName) is the policy in force (version \(current.version), sha256 \(current.sha256))"]
        }
        var fields = FieldList()
        fields.add("version", current.version.hasSameBytes(as: proposed.version)
            ? "\(current.version) (unchanged)" : "\(current.version) -> \(proposed.version)")
        fields.add("sha256", "\(current.sha256) -> \(proposed.sha256)")
        fields.add("apps added", appsAdded.isEmpty ? "none" : appsAdded.joined(separator: ", "))
        fields.add("apps removed", appsRemoved.isEmpty ? "none" : appsRemoved.joined(separator: ", "))
        fields.add("apps changed", appsChanged.isEmpty ? "none" : appsChanged.joined(separator: ", "))
        let defaultsChanged = changes.filter { $0.path.hasPrefix("defaults") }.count
        fields.add("defaults changed", defaultsChanged == 0 ? "none" : "\(defaultsChanged) setting\(defaultsChanged == 1 ? "" : "s")")
        if !changes.isEmpty {
            fields.add("settings", "in force -> \(proposedName)")
            for change in changes {
                fields.addDetail("\(change.path): \(Self.display(change.current)) -> \(Self.display(change.proposed))")
            }
        }
        return fields.lines
    }

    private static func display(_ value: JSONValue?) -> String { value?.serializedString() ?? "(not set)" }
}
