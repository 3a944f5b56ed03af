import JSONCore
@testable import ProctorPolicy
import Testing

/// A policy of `CompiledPolicy.concurrentSortMinimum` apps or more has its ids sorted in halves
/// on two threads and merged: every app must compile exactly as it does alone in a policy
/// small enough to sort on one.
@Suite struct EngineConcurrentCompileTests {
    private static let defaults = AppSettings(dlp: DLPSettings(clipboardLevel: .managed, shareExempt: ["com.example.*"],
                                                               fileExportDeny: ["/tmp/**"]))

    private static func app(_ index: Int) -> AppPolicy {
        AppPolicy(state: index % 50 == 49 ? .blocked : index % 97 == 96 ? .retired : .authorized,
                  settings: AppSettings(
                      dlp: index % 5 == 0 ? DLPSettings() : DLPSettings(
                          clipboardLevel: ClipboardLevel.allCases[index % 4], clipboardCharLimit: index % 3 == 0 ? nil : index % 70,
                          shareSend: ShareLevel.allCases[index % 3], shareExempt: ["org.partner\(index % 13).*"],
                          print: Toggle.allCases[index % 2],
                          fileExportAllow: index % 2 == 0 ? ["/srv/export/app\(index % 40)/**"] : nil),
                      compliance: ComplianceSettings(minVersion: SemanticVersion(major: 1, minor: index % 9, patch: 0))))
    }

    @Test func everyAppCompilesAsItDoesAlone() throws {
        let count = CompiledPolicy.concurrentSortMinimum + 4000
        let ids = (0..<count).map { "com.concurrent.app\($0)" }
        let engine = CompiledPolicy(Policy(version: "1", defaults: Self.defaults,
                                           apps: Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($1, Self.app($0)) })))
        let requests: [(Action, String?)] = [(.print, nil), (.clipboardCopy, "org.partner3.x"), (.shareSend, "com.example.y"),
                                             (.fileExport, "/srv/export/app4/a.pdf"), (.fileExport, "/tmp/x"), (.launch, nil)]
        for (index, id) in ids.enumerated() where index % 7 == 0 || index >= count - 200 {
            let alone = CompiledPolicy(Policy(version: "1", defaults: Self.defaults, apps: [id: Self.app(index)]))
            #expect(engine.effectiveRules(for: id) == alone.effectiveRules(for: id), "\(id)")
            #expect(engine.isManaged(id) == alone.isManaged(id), "\(id)")
            for (action, target) in requests {
                let request = DecisionRequest(app: id, action: action, target: target, size: 10,
                                              appVersion: SemanticVersion(major: 1, minor: 4, patch: 0))
                #expect(engine.decide(request) == alone.decide(request), "\(id) \(action)")
            }
        }
        #expect(engine.managedAppIDs == ids.indices.filter { Self.app($0).state == .authorized }.map { ids[$0] }.sorted())
        #expect(!engine.isManaged("com.concurrent.app\(count)"))
    }
}
