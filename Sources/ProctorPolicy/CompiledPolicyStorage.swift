import Synchronization

/// Everything a compiled policy decides from, in one object so that a `CompiledPolicy` is a
/// single reference (copies and closure captures cost one retain), and the hot data in raw
/// memory written once at compile time (hence `@unchecked Sendable`: immutable after `init`).
///
/// It keeps no parsed `Policy` and no `String` per app: the ids live in `table`, the rest of
/// each entry in `records` and `entries`, from which `CompiledPolicy.appPolicy` and
/// `CompiledPolicy.policy` rebuild the parsed form when asked.
@usableFromInline
final class CompiledPolicyStorage: @unchecked Sendable {
    let version: String
    let defaults: AppSettings
    let table: AppTable
    /// The record of the app at table position `p` is `records[p]`, so a decision's record
    /// load does not wait for the slot load (positions without an app are uninitialised).
    let records: UnsafeMutableBufferPointer<AppRecord>
    let tables: CompiledTables
    /// In record order (the sorted ids, `table.positions`).
    let entries: AppEntries
    /// The record of the app at table position `p` is `recordAtPosition[p]` (-1 for none).
    let recordAtPosition: [Int32]
    /// Unique to this storage among all made by the process (`CompiledPolicy.AppPlace`): an
    /// address could be reused by a later storage, a number drawn from a counter is not.
    let generation = CompiledPolicyStorage.generations.add(1, ordering: .relaxed).newValue

    private static let generations = Atomic<UInt64>(0)

    init(version: String, defaults: AppSettings, appIDs: [AppID], records: [AppRecord], entries: AppEntries,
         tables: CompiledTables) {
        self.version = version
        self.defaults = defaults
        self.entries = entries
        self.tables = tables
        table = AppTable(appIDs) { records[$0].state }
        let raw = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<AppRecord>.stride * table.capacity, alignment: 64)
        self.records = UnsafeMutableBufferPointer(start: raw.bindMemory(to: AppRecord.self, capacity: table.capacity),
                                                  count: table.capacity)
        var recordAtPosition = [Int32](repeating: -1, count: table.capacity)
        for (record, position) in table.positions.enumerated() {
            (self.records.baseAddress! + position).initialize(to: records[record])
            recordAtPosition[position] = Int32(record)
        }
        self.recordAtPosition = recordAtPosition
    }

    /// A storage from a snapshot (`CompiledPolicySnapshot`), taking ownership of `records`
    /// (`table.capacity` of them, initialised at `table.positions`), all checked by the caller.
    init(version: String, defaults: AppSettings, table: AppTable, records: UnsafeMutableBufferPointer<AppRecord>,
         tables: CompiledTables, entries: AppEntries, recordAtPosition: [Int32]) {
        self.version = version
        self.defaults = defaults
        self.table = table
        self.records = records
        self.tables = tables
        self.entries = entries
        self.recordAtPosition = recordAtPosition
    }

    deinit {
        for position in table.positions { (records.baseAddress! + position).deinitialize(count: 1) }
        records.deallocate()
    }

    /// The entry of the app at table `position`, as the policy said it.
    func appPolicy(at position: Int) -> AppPolicy {
        let record = Int(recordAtPosition[position])
        let flags = entries.entries[record].flags
        let resolved = records[position]
        return AppPolicy(state: resolved.state, match: entries.match(record), config: entries.config(record),
                         settings: tables.settings(of: .app, in: resolved.settings,
                                                   saysOfflineWipe: flags.contains(.saysOfflineWipe),
                                                   saysEnforcement: flags.contains(.saysEnforcement)))
    }
}
