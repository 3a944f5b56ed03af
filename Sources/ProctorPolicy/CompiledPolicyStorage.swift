import Synchronization

/// Everything a compiled policy decides from, in one object so that a `CompiledPolicy` is a
/// single reference (copies and closure captures cost one retain), and the hot data in raw
/// memory written once at compile time (hence `@unchecked Sendable`: immutable after `init`).
///
/// It keeps no parsed `Policy` and no `String` per app: the ids and what decisions read live
/// in `table`, the rest of each entry in `offline` and `entries`, from which `CompiledPolicy.appPolicy` and
/// `CompiledPolicy.policy` rebuild the parsed form when asked.
@usableFromInline
final class CompiledPolicyStorage: @unchecked Sendable {
    let version: String
    let defaults: AppSettings
    let table: AppTable
    let tables: CompiledTables
    /// In record order (the sorted ids, `table.positions`), as `offline`.
    let entries: AppEntries
    let offline: [OfflineSeconds]
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
        table = AppTable(appIDs) { (records[$0].state, records[$0].settings.decision) }
        offline = records.map(\.settings.offline)
        var recordAtPosition = [Int32](repeating: -1, count: table.capacity)
        for (record, position) in table.positions.enumerated() { recordAtPosition[position] = Int32(record) }
        self.recordAtPosition = recordAtPosition
    }

    /// A storage from a snapshot (`CompiledPolicySnapshot`), all checked by the caller.
    init(version: String, defaults: AppSettings, table: AppTable, tables: CompiledTables, entries: AppEntries,
         offline: [OfflineSeconds], recordAtPosition: [Int32]) {
        self.version = version
        self.defaults = defaults
        self.table = table
        self.tables = tables
        self.entries = entries
        self.offline = offline
        self.recordAtPosition = recordAtPosition
    }

    /// The offline limits of the app at table `position`.
    func offlineSeconds(at position: Int) -> OfflineSeconds { offline[Int(recordAtPosition[position])] }

    /// The entry of the app at table `position`, as the policy said it.
    func appPolicy(at position: Int) -> AppPolicy {
        let record = Int(recordAtPosition[position])
        let flags = entries.entries[record].flags
        let resolved = ResolvedSettings(decision: table.settings(at: position).pointee, offline: offline[record])
        return AppPolicy(state: table.state(at: position), match: entries.match(record), config: entries.config(record),
                         settings: tables.settings(of: .app, in: resolved,
                                                   saysOfflineWipe: flags.contains(.saysOfflineWipe),
                                                   saysEnforcement: flags.contains(.saysEnforcement)))
    }
}
