/// Everything a compiled policy decides from, in one object so that a `CompiledPolicy` is a
/// single reference (copies and closure captures cost one retain), and the hot data in raw
/// memory written once at compile time (hence `@unchecked Sendable`: immutable after `init`).
final class CompiledPolicyStorage: @unchecked Sendable {
    let policy: Policy
    let table: AppTable
    /// Record `r` is the app `appIDs[r]`.
    let appIDs: [AppID]
    let records: UnsafeMutableBufferPointer<AppRecord>
    let tables: CompiledTables

    init(policy: Policy, appIDs: [AppID], records: [AppRecord], tables: CompiledTables) {
        self.policy = policy
        self.appIDs = appIDs
        self.tables = tables
        self.records = UnsafeMutableBufferPointer.allocate(capacity: max(1, records.count))
        _ = self.records.initialize(from: records)
        table = AppTable(appIDs) { records[$0].state }
        recordCount = records.count
    }

    /// How many records are initialised (`records` has room for at least one).
    private let recordCount: Int

    deinit {
        records.baseAddress!.deinitialize(count: recordCount)
        records.deallocate()
    }

    /// The rule of a list entry (`apps["x"].dlp.fileExport.deny[2]`).
    func rule(_ id: RuleID) -> String { tables.rules[Int(id)] }
}
