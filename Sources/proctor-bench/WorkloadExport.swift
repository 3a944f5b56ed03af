import JSONCore
import ProctorPolicy

/// `proctor-bench workload --apps N --count M --out FILE`: writes the in-process workload for
/// other engines (bench/engines.py evaluates it in Cedar and Rego) as one JSON document:
/// every app's state and resolved rules (what `effectiveRules(for:)` gives: defaults and
/// built-ins applied), the queries, and Proctor's answer to each.
enum WorkloadExport {
    static let name = "workload"

    static func run(_ arguments: [String]) throws -> Int32 {
        var appCount = 10, count = 1_000
        var output: String?
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            guard let value = remaining.popFirst() else { throw BenchUsageError(description: "\(argument) needs a value") }
            switch argument {
            case "--apps": appCount = try number(argument, value)
            case "--count": count = try number(argument, value)
            case "--out": output = value
            default: throw BenchUsageError(description: "workload: unknown option '\(argument)'")
            }
        }
        guard let output else { throw BenchUsageError(description: "workload needs --out FILE") }
        let synthetic = SyntheticPolicy(appCount: appCount)
        let engine = CompiledPolicy(synthetic.policy)
        var apps: [String: JSONValue] = [:]
        for (id, entry) in synthetic.policy.apps {
            apps[id] = ["state": .string(entry.state.rawValue), "rules": engine.effectiveRules(for: id) ?? [:]]
        }
        let queries: [JSONValue] = synthetic.requests(count: count, seed: UInt64(appCount)).map { request in
            let decision = engine.decide(request)
            return [
                "app": .string(request.app), "action": .string(request.action.rawValue),
                "target": request.target.map(JSONValue.string) ?? .null,
                "size": request.size.map { .number($0) } ?? .null,
                "appVersion": request.appVersion.map { .string($0.description) } ?? .null,
                "allowed": .bool(decision.allowed), "rule": .string(decision.rule),
            ]
        }
        try writeFile(output, JSONValue.object(["apps": .object(apps), "queries": .array(queries)]).serialized())
        return 0
    }

    private static func number(_ option: String, _ text: String) throws -> Int {
        guard let value = Int(text), value > 0 else { throw BenchUsageError(description: "\(option) expects a positive number, got '\(text)'") }
        return value
    }
}
