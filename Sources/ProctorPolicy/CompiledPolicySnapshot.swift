import JSONCore

/// A compiled policy written into a snapshot and read back without parsing or compiling the
/// policy: the app table's slots and key arena, the records and `AppEntries`' entries are raw
/// runs copied back in one go (the snapshot is only read by the build that wrote it, so the
/// layouts agree); the few shared parts (glob lists, versions, user lists, configs, `version`
/// and `defaults`) are written as text and compiled again.
///
/// Reading trusts nothing it reads: every length, count and index is checked against what it
/// points into, every enum's byte against its cases, and every app id must be found by a
/// lookup at its own position. A snapshot that fails any check gives `SnapshotDamage`.
extension CompiledPolicy {
    /// Appends this policy to `encoder`.
    public func encodeSnapshot(into encoder: inout SnapshotEncoder) {
        let storage = storage, table = storage.table
        encoder.append(String(decoding: Policy(version: version, defaults: storage.defaults).canonicalBytes, as: UTF8.self))
        encoder.append(table.capacity)
        encoder.append(table.positions.count)
        encoder.append(table.longestKeyLength)
        encoder.append(raw: table.rawSlots)
        encoder.append(raw: table.rawKeyBytes)
        table.positions.map { UInt32($0) }.withUnsafeBytes { encoder.append(raw: $0) }
        Self.withoutPadding(table.positions.map { storage.records[$0] }, fields: Self.recordFields) { encoder.append(raw: $0) }

        let tables = storage.tables
        encoder.append(tables.appIDGlobLists.count)
        for list in tables.appIDGlobLists { encoder.append(list.patterns) }
        encoder.append(tables.pathGlobLists.count)
        for list in tables.pathGlobLists { encoder.append(list.map(\.pattern)) }
        encoder.append(tables.versions.map(\.description))

        let entries = storage.entries
        Self.withoutPadding(entries.entries, fields: Self.entryFields) { encoder.append(raw: $0) }
        entries.executableArena.withUnsafeBytes { encoder.append(raw: $0) }
        encoder.append(entries.userLists.count)
        for list in entries.userLists { encoder.append(list) }
        encoder.append(entries.configs.count)
        for config in entries.configs { encoder.append(JSONValue.object(config).serializedString()) }
    }

    /// The policy `encodeSnapshot` wrote at `decoder`'s position.
    public init(decodingSnapshot decoder: inout SnapshotDecoder) throws(SnapshotDamage) {
        let head = try decoder.readString("the version and defaults")
        let base: Policy
        do {
            base = try Policy.parse(Array(head.utf8), source: nil)
        } catch {
            throw SnapshotDamage("the version and defaults are not a policy: \(error)")
        }
        let table = try Self.decodeTable(&decoder)
        let count = table.positions.count
        let recordBytes = try decoder.readRaw("the records", count: count, stride: MemoryLayout<AppRecord>.stride)
        let tables = try Self.decodeTables(&decoder)
        let entries = try Self.decodeEntries(&decoder, count: count)

        // Every record checked before any is copied in.
        for record in 0..<count {
            try Self.check(recordBytes.baseAddress! + record * MemoryLayout<AppRecord>.stride, record: record,
                           state: table.state(at: table.positions[record]), tables: tables)
        }
        let raw = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<AppRecord>.stride * table.capacity, alignment: 64)
        let records = UnsafeMutableBufferPointer(start: raw.bindMemory(to: AppRecord.self, capacity: table.capacity),
                                                 count: table.capacity)
        var recordAtPosition = [Int32](repeating: -1, count: table.capacity)
        for (record, position) in table.positions.enumerated() {
            UnsafeMutableRawPointer(records.baseAddress! + position)
                .copyMemory(from: recordBytes.baseAddress! + record * MemoryLayout<AppRecord>.stride,
                            byteCount: MemoryLayout<AppRecord>.stride)
            recordAtPosition[position] = Int32(record)
        }
        storage = CompiledPolicyStorage(version: base.version, defaults: base.defaults, table: table, records: records,
                                        tables: tables, entries: entries, recordAtPosition: recordAtPosition)
    }

    /// The bytes of `values` with the padding between their fields zeroed: padding holds
    /// whatever the memory held before, which the file should neither carry nor vary by.
    private static func withoutPadding<Value>(_ values: [Value], fields: [(offset: Int, size: Int)],
                                              _ body: (UnsafeRawBufferPointer) -> Void) {
        var isField = [Bool](repeating: false, count: MemoryLayout<Value>.stride)
        for field in fields { for byte in field.offset..<field.offset + field.size { isField[byte] = true } }
        var bytes = values.withUnsafeBytes { Array($0) }
        let stride = MemoryLayout<Value>.stride
        for (byte, kept) in isField.enumerated() where !kept {
            for value in 0..<values.count { bytes[value * stride + byte] = 0 }
        }
        bytes.withUnsafeBytes(body)
    }

    private static func field<Root, Value>(_ path: KeyPath<Root, Value>) -> (offset: Int, size: Int) {
        (MemoryLayout<Root>.offset(of: path)!, MemoryLayout<Value>.size)
    }

    /// Every stored field of `AppRecord` (a field added there must be added here, or it is
    /// written as zero: `CompiledPolicySnapshotTests` would fail).
    private static let recordFields = [
        field(\AppRecord.state), field(\AppRecord.settings.clipboardCharLimit), field(\AppRecord.settings.offlineGraceSeconds),
        field(\AppRecord.settings.offlineWipeSeconds), field(\AppRecord.settings.shareExempt),
        field(\AppRecord.settings.fileExportAllow), field(\AppRecord.settings.fileExportDeny),
        field(\AppRecord.settings.minVersion), field(\AppRecord.settings.layers), field(\AppRecord.settings.clipboardLevel),
        field(\AppRecord.settings.shareSend), field(\AppRecord.settings.shareReceive), field(\AppRecord.settings.print),
        field(\AppRecord.settings.screenCapture), field(\AppRecord.settings.notifications),
        field(\AppRecord.settings.onViolation), field(\AppRecord.settings.fileExportEnforcement),
    ]

    private static let entryFields = [
        field(\AppEntries.Entry.executableStart), field(\AppEntries.Entry.executableLength), field(\AppEntries.Entry.users),
        field(\AppEntries.Entry.config), field(\AppEntries.Entry.flags),
    ]

    // MARK: Reading the parts

    private static func decodeTable(_ decoder: inout SnapshotDecoder) throws(SnapshotDamage) -> AppTable {
        let capacity = try decoder.readInt("the table's capacity", limit: 1 << 31)
        guard capacity >= 8, capacity & (capacity - 1) == 0 else {
            throw SnapshotDamage("the table's capacity \(capacity) is not a power of two from 8")
        }
        // At least one empty slot, where a lookup of an absent id stops.
        let count = try decoder.readInt("the number of apps", limit: capacity - 1)
        let longestKey = try decoder.readInt("the longest id", limit: Int(UInt32.max))
        let slotBytes = try decoder.readRaw("the table's slots", count: capacity, stride: MemoryLayout<AppTable.Slot>.stride)
        let arenaLength = try decoder.readInt("the length of the ids' arena", limit: Int(UInt32.max))
        let arena = try decoder.take(arenaLength, "the ids' arena")
        let positionBytes = try decoder.readRaw("the table's positions", count: count, stride: 4)

        let slots = UnsafeMutableBufferPointer<AppTable.Slot>(
            start: UnsafeMutableRawPointer.allocate(byteCount: slotBytes.count, alignment: 64)
                .bindMemory(to: AppTable.Slot.self, capacity: capacity),
            count: capacity)
        UnsafeMutableRawPointer(slots.baseAddress!).copyMemory(from: slotBytes.baseAddress!, byteCount: slotBytes.count)
        let keyBytes = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(1, arena.count))
        if arena.count > 0 { UnsafeMutableRawPointer(keyBytes.baseAddress!).copyMemory(from: arena.baseAddress!, byteCount: arena.count) }
        var occupied = 0
        for index in 0..<capacity where slots[index].entry != AppTable.empty {
            let slot = slots[index]
            let length = Int(slot.keyLength), overflow = max(0, length - AppTable.inlineKeyBytes)
            guard slot.entry & 0xFF < UInt32(AppTable.states.count), AppKeyForm(rawValue: slot.entry >> 8) != nil,
                  length <= longestKey, Int(slot.overflowStart) + overflow <= arena.count else {
                slots.deallocate()
                keyBytes.deallocate()
                throw SnapshotDamage("slot \(index) of the table is not a valid entry")
            }
            occupied += 1
        }
        var positions: [Int] = []
        positions.reserveCapacity(count)
        for record in 0..<count {
            positions.append(Int(UInt32(littleEndian: positionBytes.loadUnaligned(fromByteOffset: record * 4, as: UInt32.self))))
        }
        // Checked from here on by the table itself, which frees its memory when it goes.
        let table = AppTable(restoring: slots, keyBytes: keyBytes, positions: positions, longestKey: longestKey)
        guard occupied == count else { throw SnapshotDamage("the table holds \(occupied) ids, its positions \(count)") }
        // Each position in range, occupied and listed once (with as many slots occupied as
        // positions, so every occupied slot has its record: none is read uninitialised), and
        // its id found there by a lookup: so the hashes are right and every slot's key can be
        // read back.
        var listed = [Bool](repeating: false, count: capacity)
        for (record, position) in positions.enumerated() {
            guard position < capacity, !listed[position] else {
                throw SnapshotDamage("the position \(position) of app \(record) is out of range or another app's")
            }
            listed[position] = true
            guard slots[position].entry != AppTable.empty, table.find(table.id(at: position))?.position == position else {
                throw SnapshotDamage("the id of app \(record) is not found at its position \(position)")
            }
        }
        return table
    }

    /// The byte offset in `AppRecord` and the number of cases of each of its enums.
    private static let recordEnums: [(offset: Int, cases: Int)] = [
        (MemoryLayout<AppRecord>.offset(of: \.state)!, AppState.allCases.count),
        (MemoryLayout<AppRecord>.offset(of: \.settings.clipboardLevel)!, ClipboardLevel.allCases.count),
        (MemoryLayout<AppRecord>.offset(of: \.settings.shareSend)!, ShareLevel.allCases.count),
        (MemoryLayout<AppRecord>.offset(of: \.settings.shareReceive)!, ShareLevel.allCases.count),
        (MemoryLayout<AppRecord>.offset(of: \.settings.print)!, Toggle.allCases.count),
        (MemoryLayout<AppRecord>.offset(of: \.settings.screenCapture)!, Toggle.allCases.count),
        (MemoryLayout<AppRecord>.offset(of: \.settings.notifications)!, NotificationLevel.allCases.count),
        (MemoryLayout<AppRecord>.offset(of: \.settings.onViolation)!, Violation.allCases.count),
        (MemoryLayout<AppRecord>.offset(of: \.settings.fileExportEnforcement)!, ExportEnforcement.allCases.count),
    ]

    /// Checks the record at `bytes` without loading it as an `AppRecord` (an enum's byte out of
    /// its range is undefined as a value): its enums, layers and indices into `tables`, and its
    /// state is the one the table holds for it.
    private static func check(_ bytes: UnsafeRawPointer, record: Int, state: AppState, tables: CompiledTables)
        throws(SnapshotDamage)
    {
        for field in recordEnums where Int(bytes.load(fromByteOffset: field.offset, as: UInt8.self)) >= field.cases {
            throw SnapshotDamage("app \(record)'s record has a value out of range at byte \(field.offset)")
        }
        func load<Value>(_ path: KeyPath<AppRecord, Value>, as type: Value.Type) -> Value {
            bytes.loadUnaligned(fromByteOffset: MemoryLayout<AppRecord>.offset(of: path)!, as: type)
        }
        let layers = load(\.settings.layers, as: UInt32.self)
        // Two bits per setting; 3 is no layer.
        guard layers & (layers >> 1) & 0x5555_5555 == 0 else { throw SnapshotDamage("app \(record)'s record has a bad layer") }
        func layer(_ setting: RuleSetting) -> UInt32 { layers >> (2 * UInt32(setting.rawValue)) & 3 }
        let shareExempt = load(\.settings.shareExempt, as: Int32.self)
        let allow = load(\.settings.fileExportAllow, as: Int32.self), deny = load(\.settings.fileExportDeny, as: Int32.self)
        let minVersion = load(\.settings.minVersion, as: Int32.self)
        // -1 (none) only where no layer said a value: the built-in defaults have none.
        func valid(_ index: Int32, _ count: Int, noneAllowed: Bool) -> Bool {
            index >= (noneAllowed ? -1 : 0) && Int(index) < count
        }
        guard valid(shareExempt, tables.appIDGlobLists.count, noneAllowed: false),
              valid(deny, tables.pathGlobLists.count, noneAllowed: false),
              valid(allow, tables.pathGlobLists.count, noneAllowed: layer(.fileExportAllow) == 0),
              valid(minVersion, tables.versions.count, noneAllowed: layer(.minVersion) == 0) else {
            throw SnapshotDamage("app \(record)'s record points outside the glob lists or versions")
        }
        guard AppState.allCases[Int(bytes.load(fromByteOffset: recordEnums[0].offset, as: UInt8.self))] == state else {
            throw SnapshotDamage("app \(record)'s record and its table slot disagree on its state")
        }
    }

    private static func decodeTables(_ decoder: inout SnapshotDecoder) throws(SnapshotDamage) -> CompiledTables {
        var appIDGlobLists: [GlobList] = []
        for _ in 0..<(try decoder.readInt("the number of app id glob lists")) {
            appIDGlobLists.append(GlobList(try decoder.readStrings("app id globs")))
        }
        var pathGlobLists: [[PathGlob]] = []
        for _ in 0..<(try decoder.readInt("the number of path glob lists")) {
            pathGlobLists.append(try decoder.readStrings("path globs").map(PathGlob.init))
        }
        var versions: [SemanticVersion] = []
        for text in try decoder.readStrings("versions") {
            guard let version = SemanticVersion(text) else { throw SnapshotDamage("version '\(text)' is not a version") }
            versions.append(version)
        }
        return CompiledTables(appIDGlobLists: appIDGlobLists, pathGlobLists: pathGlobLists, versions: versions)
    }

    private static func decodeEntries(_ decoder: inout SnapshotDecoder, count: Int) throws(SnapshotDamage) -> AppEntries {
        let entryBytes = try decoder.readRaw("the entries", count: count, stride: MemoryLayout<AppEntries.Entry>.stride)
        let arena = try decoder.take(try decoder.readInt("the length of the executables", limit: Int(UInt32.max)),
                                     "the executables")
        var userLists: [[String]] = []
        for _ in 0..<(try decoder.readInt("the number of user lists")) { userLists.append(try decoder.readStrings("users")) }
        var configs: [[String: JSONValue]] = []
        for _ in 0..<(try decoder.readInt("the number of configs")) {
            let text = try decoder.readString("a config")
            guard let config = (try? JSONParser.parse(text))?.objectValue else {
                throw SnapshotDamage("config \(configs.count) is not a JSON object")
            }
            configs.append(config)
        }
        let flagsOffset = MemoryLayout<AppEntries.Entry>.offset(of: \.flags)!
        var entries: [AppEntries.Entry] = []
        entries.reserveCapacity(count)
        for record in 0..<count {
            let bytes = entryBytes.baseAddress! + record * MemoryLayout<AppEntries.Entry>.stride
            guard bytes.load(fromByteOffset: flagsOffset, as: UInt8.self) & ~0b111 == 0 else {
                throw SnapshotDamage("app \(record)'s entry has unknown flags")
            }
            let entry = bytes.loadUnaligned(as: AppEntries.Entry.self)
            let executableFits = entry.executableLength == AppEntries.noExecutable
                || Int(entry.executableStart) + Int(entry.executableLength) <= arena.count
            guard executableFits, entry.users >= -1, Int(entry.users) < userLists.count,
                  entry.config >= -1, Int(entry.config) < configs.count else {
                throw SnapshotDamage("app \(record)'s entry points outside the executables, user lists or configs")
            }
            entries.append(entry)
        }
        return AppEntries(entries: entries, executableBytes: Array(arena), userLists: userLists, configs: configs)
    }
}

extension CompiledTables {
    /// Tables from a snapshot; the interning dictionaries, only used while compiling, stay empty.
    init(appIDGlobLists: [GlobList], pathGlobLists: [[PathGlob]], versions: [SemanticVersion]) {
        self.appIDGlobLists = appIDGlobLists
        self.pathGlobLists = pathGlobLists
        self.versions = versions
        versionNumbers = versions.map { ($0.major, $0.minor, $0.patch) }
    }
}
