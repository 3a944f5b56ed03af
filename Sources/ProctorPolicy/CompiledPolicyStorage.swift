/// Everything a compiled policy decides from, in one object so that a `CompiledPolicy` is a
/// single reference (copies and closure captures cost one retain), and the hot data in raw
/// memory written once at compile time (hence `@unchecked Sendable`: immutable after `init`).
final class CompiledPolicyStorage: @unchecked Sendable {
    let policy: Policy
    let table: AppTable
    /// Record `r` is the app `appIDs[r]`.
    let appIDs: [AppID]
    let records: UnsafeMutableBufferPointer<AppRecord>
    let rules: UnsafeMutableBufferPointer<String>
    let tables: CompiledTables

    init(policy: Policy, appIDs: [AppID], records: [AppRecord], tables: CompiledTables) {
        self.policy = policy
        self.appIDs = appIDs
        self.tables = tables
        self.records = UnsafeMutableBufferPointer.allocate(capacity: max(1, records.count))
        _ = self.records.initialize(from: records)
        rules = UnsafeMutableBufferPointer.allocate(capacity: max(1, tables.rules.count))
        _ = rules.initialize(from: tables.rules)
        table = AppTable(appIDs) { records[$0].state == .authorized }
        recordCount = records.count
    }

    private let recordCount: Int

    deinit {
        records.baseAddress!.deinitialize(count: recordCount)
        records.deallocate()
        rules.baseAddress!.deinitialize(count: tables.rules.count)
        rules.deallocate()
    }

    func rule(_ id: RuleID) -> String { rules[Int(id)] }
}
