/// Everything a compiled policy decides from, in one object so that a `CompiledPolicy` is a
/// single reference (copies and closure captures cost one retain), and the hot data in raw
/// memory written once at compile time (hence `@unchecked Sendable`: immutable after `init`).
final class CompiledPolicyStorage: @unchecked Sendable {
    let policy: Policy
    let table: AppTable
    /// Sorted.
    let appIDs: [AppID]
    /// The record of the app at table position `p` is `records[p]`, so a decision's record
    /// load does not wait for the slot load (positions without an app are uninitialised).
    let records: UnsafeMutableBufferPointer<AppRecord>
    let tables: CompiledTables

    init(policy: Policy, appIDs: [AppID], records: [AppRecord], tables: CompiledTables) {
        self.policy = policy
        self.appIDs = appIDs
        self.tables = tables
        table = AppTable(appIDs) { records[$0].state }
        let raw = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<AppRecord>.stride * table.capacity, alignment: 64)
        self.records = UnsafeMutableBufferPointer(start: raw.bindMemory(to: AppRecord.self, capacity: table.capacity),
                                                  count: table.capacity)
        for (record, position) in table.positions.enumerated() {
            (self.records.baseAddress! + position).initialize(to: records[record])
        }
    }

    deinit {
        for position in table.positions { (records.baseAddress! + position).deinitialize(count: 1) }
        records.deallocate()
    }
}
