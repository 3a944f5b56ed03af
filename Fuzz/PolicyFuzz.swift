// libFuzzer target for the policy parser (files an administrator or an MDM writes) and the
// engine behind it: any bytes either parse, or produce problems that each have a location;
// a parsed policy compiles, answers every action, and survives its canonical round trip;
// parsing (which tries the start-up path's fast reader first) reads what the validating
// reader reads from the same document.
// Not part of a SwiftPM target; `Fuzz/build.sh policy` builds it.
import JSONCore
import ProctorPolicy

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let root = try? JSONParser.parse(bytes, maxDepth: PolicyLimits.maxNestingDepth) {
        check((try? Policy.parse(bytes, source: "fuzz.json")) == (try? Policy.read(root, source: "fuzz.json")),
              "the fast reader and the validating reader read different policies")
    }
    let fragment: PolicyFragment
    do {
        fragment = try PolicyFragment.parse(bytes, source: "fuzz.json")
    } catch {
        check(!error.problems.isEmpty, "a refused policy must say why")
        return 0
    }
    guard let policy = try? Policy.merge([fragment]) else { return 0 }
    let engine = CompiledPolicy(policy)
    for app in policy.apps.keys.prefix(4) {
        for action in Action.allCases {
            _ = engine.decide(DecisionRequest(app: app, action: action, target: "/home/a/../b/./c", size: 3))
        }
        _ = engine.effectiveRules(for: app)
    }
    let reparsed = try? Policy.parse(policy.canonicalBytes, source: "canonical")
    check(reparsed?.sha256 == policy.sha256, "the canonical form must parse back to the same policy")
    return 0
}
