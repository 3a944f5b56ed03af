// libFuzzer target for the compiled policy in proctord's policy snapshot (format 2): the
// body `CompiledPolicy.encodeSnapshot` writes, read with `CompiledPolicy(decodingSnapshot:)`
// directly, below the file's header and checksum, which would otherwise stop nearly every
// mutation. Any bytes are refused with `SnapshotDamage` or decode into a policy that works:
// it rebuilds its `Policy` (canonical form, hash), answers every action for its apps and an
// unknown one, and written again reads back as the same policy and the same bytes.
// Not part of a SwiftPM target; `Fuzz/build.sh snapshot` builds it.
import ProctorPolicy

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let decoded = decode(UnsafeRawBufferPointer(start: data, count: size))
    guard case .success(let compiled) = decoded else { return 0 }
    let policy = compiled.policy
    _ = policy.sha256
    check(compiled.isCompiled(from: policy), "a decoded policy is not the policy it rebuilds")
    for app in compiled.appIDs.prefix(4) + [AppID("fuzz.unknown.app")] {
        for action in Action.allCases {
            _ = compiled.decide(DecisionRequest(app: app, action: action, target: "/home/a/../b/./c", size: 3))
        }
        _ = compiled.appPolicy(app)
    }
    let written = encode(compiled)
    guard case .success(let reread) = written.withUnsafeBytes({ decode($0) }) else {
        fail("a decoded policy, written again, is refused")
    }
    check(reread.policy == policy, "a decoded policy, written and read again, is a different policy")
    check(encode(reread) == written, "a decoded policy, written and read again, writes different bytes")
    return 0
}

private func encode(_ compiled: CompiledPolicy) -> [UInt8] {
    var encoder = SnapshotEncoder()
    compiled.encodeSnapshot(into: &encoder)
    return encoder.bytes
}

private func decode(_ bytes: UnsafeRawBufferPointer) -> Result<CompiledPolicy, SnapshotDamage> {
    Result { () throws(SnapshotDamage) in
        var decoder = SnapshotDecoder(bytes)
        return try CompiledPolicy(decodingSnapshot: &decoder)
    }
}
