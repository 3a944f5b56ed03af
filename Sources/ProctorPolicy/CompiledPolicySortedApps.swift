import Glibc
import LinuxIO

/// Compiling a large policy (it follows parsing on the way to READY=1): the ids sorted in
/// halves on two CPUs, each with where its entry is, so that no id is hashed again.
extension CompiledPolicy {
    /// From this many apps the ids are sorted on two threads: below, waking one costs more.
    static let concurrentSortMinimum = 8192

    private static let hasSeveralCPUs = sysconf(Int32(_SC_NPROCESSORS_ONLN)) > 1

    typealias SortedApps = [(id: AppID, index: Dictionary<AppID, AppPolicy>.Index)]

    /// The records of `sorted` (each app's settings over `policy.defaults` and the built-in
    /// ones), their entries (`AppEntries`) and the tables they index, each app read by its
    /// dictionary index rather than by hashing its id again.
    static func records(_ policy: Policy, _ sorted: SortedApps)
        -> (records: [AppRecord], entries: AppEntries, tables: CompiledTables)
    {
        var tables = CompiledTables()
        let builtin = tables.builtinSettings()
        let defaults = tables.overlay(policy.defaults, layer: .defaults, over: builtin)
        var records: [AppRecord] = []
        records.reserveCapacity(sorted.count)
        var entries = AppEntries(capacity: sorted.count)
        for entry in sorted {
            let app = policy.apps[entry.index].value
            records.append(AppRecord(settings: tables.overlay(app.settings, layer: .app, over: defaults), state: app.state))
            entries.append(app)
        }
        entries.finish()
        return (records, entries, tables)
    }

    /// The ids of `apps` sorted by `String`'s order, each with where its entry is in `apps`,
    /// so that compiling reads every entry without hashing its id again. Sorted in halves,
    /// side by side when there are many and several CPUs, then merged.
    static func sortedApps(_ apps: [AppID: AppPolicy]) -> SortedApps {
        let keys = apps.keys
        var entries = keys.indices.map { (id: keys[$0], index: $0) }
        guard entries.count >= concurrentSortMinimum, hasSeveralCPUs else {
            entries.sort { $0.id < $1.id }
            return entries
        }
        let middle = entries.count / 2
        return entries.withUnsafeMutableBufferPointer { entries in
            // Each thread sorts its own half of the buffer; neither touches the other's.
            nonisolated(unsafe) let halves = entries
            WorkerPool.shared.parallelFor(2) { half in
                var run = UnsafeMutableBufferPointer(rebasing: half == 0 ? halves[..<middle] : halves[middle...])
                run.sort { $0.id < $1.id }
            }
            return merge(entries[..<middle], entries[middle...])
        }
    }

    /// Two runs sorted by id (ids unique) as one.
    private static func merge<Entry>(_ low: Slice<UnsafeMutableBufferPointer<(id: AppID, index: Entry)>>,
                                     _ high: Slice<UnsafeMutableBufferPointer<(id: AppID, index: Entry)>>) -> [(id: AppID, index: Entry)] {
        var merged: [(id: AppID, index: Entry)] = []
        merged.reserveCapacity(low.count + high.count)
        var (i, j) = (low.startIndex, high.startIndex)
        while i < low.endIndex && j < high.endIndex {
            if high[j].id < low[i].id {
                merged.append(high[j])
                j += 1
            } else {
                merged.append(low[i])
                i += 1
            }
        }
        merged += low[i...]
        merged += high[j...]
        return merged
    }
}
