import JSONCore

/// A compiled policy written into a snapshot and read back without parsing or compiling the
/// policy: the app table's slots (with what decisions read), tags and key arena, the offline
/// limits and `AppEntries`' entries are raw
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
        encoder.append(raw: table.rawTags)
        encoder.append(raw: table.rawKeyBytes)
        table.overflowStarts.withUnsafeBytes { encoder.append(raw: $0) }
        table.positions.map { UInt32($0) }.withUnsafeBytes { encoder.append(raw: $0) }
        storage.offline.withUnsafeBytes { encoder.append(raw: $0) }

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
        let offlineBytes = try decoder.readRaw("the offline limits", count: count, stride: MemoryLayout<OfflineSeconds>.stride)
        let tables = try Self.decodeTables(&decoder)
        let entries = try Self.decodeEntries(&decoder, count: count)

        var recordAtPosition = [Int32](repeating: -1, count: table.capacity)
        for (record, position) in table.positions.enumerated() {
            try Self.checkSettings(table.rawSlots.baseAddress! + position * MemoryLayout<AppTable.Slot>.stride
                                       + AppTable.settingsOffset, record: record, tables: tables)
            recordAtPosition[position] = Int32(record)
        }
        var offline: [OfflineSeconds] = []
        offline.reserveCapacity(count)
        for record in 0..<count {
            let limits = offlineBytes.loadUnaligned(fromByteOffset: record * MemoryLayout<OfflineSeconds>.stride,
                                                    as: OfflineSeconds.self)
            guard limits.grace >= 0, limits.wipe >= -1 else {
                throw SnapshotDamage("app \(record)'s offline limits are out of range")
            }
            offline.append(limits)
        }
        storage = CompiledPolicyStorage(version: base.version, defaults: base.defaults, table: table, tables: tables,
                                        entries: entries, offline: offline, recordAtPosition: recordAtPosition)
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
        let longestKey = try decoder.readInt("the longest id", limit: Int(UInt16.max))
        let slotBytes = try decoder.readRaw("the table's slots", count: capacity, stride: MemoryLayout<AppTable.Slot>.stride)
        let tagBytes = try decoder.readRaw("the table's tags", count: capacity, stride: 1)
        let arenaLength = try decoder.readInt("the length of the ids' arena", limit: Int(UInt32.max))
        let arena = try decoder.take(arenaLength, "the ids' arena")
        let overflowLength = try decoder.readInt("the length of the ids' overflow starts", limit: capacity * 4)
        guard overflowLength == 0 || overflowLength == capacity * 4 else {
            throw SnapshotDamage("the ids' overflow starts are \(overflowLength) bytes, expected none or \(capacity) × 4")
        }
        let overflowBytes = try decoder.take(overflowLength, "the ids' overflow starts")
        let overflowStarts = (0..<overflowLength / 4).map {
            UInt32(littleEndian: overflowBytes.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self))
        }
        let positionBytes = try decoder.readRaw("the table's positions", count: count, stride: 4)

        let slots = AppTable.uninitializedSlots(capacity: capacity)
        UnsafeMutableRawBufferPointer(slots).copyMemory(from: slotBytes)
        let tags = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: capacity)
        UnsafeMutableRawBufferPointer(tags).copyMemory(from: tagBytes)
        let keyBytes = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(1, arena.count))
        if arena.count > 0 { UnsafeMutableRawPointer(keyBytes.baseAddress!).copyMemory(from: arena.baseAddress!, byteCount: arena.count) }
        var isOccupied = [Bool](repeating: false, count: capacity)
        for index in 0..<capacity {
            // Read field by field: a slot's settings are checked later (`checkSettings`), and an
            // enum's byte out of its range is undefined as a value.
            let slot = UnsafeRawPointer(slots.baseAddress! + index)
            let entry = slot.load(fromByteOffset: MemoryLayout<AppTable.Slot>.offset(of: \.entry)!, as: UInt8.self)
            let length = Int(slot.load(fromByteOffset: MemoryLayout<AppTable.Slot>.offset(of: \.keyLength)!, as: UInt16.self))
            let isEmpty = entry == AppTable.empty, overflow = length - AppTable.inlineKeyBytes
            let keyFits = overflow <= 0 || (!overflowStarts.isEmpty && Int(overflowStarts[index]) + overflow <= arena.count)
            guard (tags[index] == 0) == isEmpty,
                  isEmpty || (entry & 3 < UInt8(AppTable.states.count) && AppKeyForm(rawValue: entry >> 2) != nil
                              && length <= longestKey && keyFits) else {
                slots.deallocate()
                tags.deallocate()
                keyBytes.deallocate()
                throw SnapshotDamage("slot \(index) of the table is not a valid entry")
            }
            isOccupied[index] = !isEmpty
        }
        var positions: [Int] = []
        positions.reserveCapacity(count)
        for record in 0..<count {
            positions.append(Int(UInt32(littleEndian: positionBytes.loadUnaligned(fromByteOffset: record * 4, as: UInt32.self))))
        }
        // Checked from here on by the table itself, which frees its memory when it goes.
        let table = AppTable(restoring: slots, tags: tags, keyBytes: keyBytes, overflowStarts: overflowStarts,
                             positions: positions, longestKey: longestKey)
        let occupied = isOccupied.count { $0 }
        guard occupied == count else { throw SnapshotDamage("the table holds \(occupied) ids, its positions \(count)") }
        // Each position in range, occupied and listed once (with as many slots occupied as
        // positions, so every occupied slot has its settings checked and its entry), and
        // its id found there by a lookup: so each id sits where its hash puts it, its tag is
        // right, and every slot's key can be read back.
        var listed = [Bool](repeating: false, count: capacity)
        for (record, position) in positions.enumerated() {
            guard position < capacity, !listed[position] else {
                throw SnapshotDamage("the position \(position) of app \(record) is out of range or another app's")
            }
            listed[position] = true
            guard isOccupied[position], table.find(table.id(at: position))?.position == position else {
                throw SnapshotDamage("the id of app \(record) is not found at its position \(position)")
            }
        }
        return table
    }

    /// The byte offset in `DecisionSettings` and the number of cases of each of its enums.
    private static let settingsEnums: [(offset: Int, cases: Int)] = [
        (MemoryLayout<DecisionSettings>.offset(of: \.clipboardLevel)!, ClipboardLevel.allCases.count),
        (MemoryLayout<DecisionSettings>.offset(of: \.shareSend)!, ShareLevel.allCases.count),
        (MemoryLayout<DecisionSettings>.offset(of: \.shareReceive)!, ShareLevel.allCases.count),
        (MemoryLayout<DecisionSettings>.offset(of: \.print)!, Toggle.allCases.count),
        (MemoryLayout<DecisionSettings>.offset(of: \.screenCapture)!, Toggle.allCases.count),
        (MemoryLayout<DecisionSettings>.offset(of: \.notifications)!, NotificationLevel.allCases.count),
        (MemoryLayout<DecisionSettings>.offset(of: \.onViolation)!, Violation.allCases.count),
        (MemoryLayout<DecisionSettings>.offset(of: \.fileExportEnforcement)!, ExportEnforcement.allCases.count),
    ]

    /// Checks the settings at `bytes` (in app `record`'s table slot) without loading them as
    /// `DecisionSettings` (an enum's byte out of its range is undefined as a value): their
    /// enums, layers and indices into `tables`.
    private static func checkSettings(_ bytes: UnsafeRawPointer, record: Int, tables: CompiledTables)
        throws(SnapshotDamage)
    {
        for field in settingsEnums where Int(bytes.load(fromByteOffset: field.offset, as: UInt8.self)) >= field.cases {
            throw SnapshotDamage("app \(record)'s settings have a value out of range at byte \(field.offset)")
        }
        func load<Value>(_ path: KeyPath<DecisionSettings, Value>, as type: Value.Type) -> Value {
            bytes.loadUnaligned(fromByteOffset: MemoryLayout<DecisionSettings>.offset(of: path)!, as: type)
        }
        let layers = load(\.layers, as: UInt32.self)
        // Two bits per setting; 3 is no layer.
        guard layers & (layers >> 1) & 0x5555_5555 == 0 else { throw SnapshotDamage("app \(record)'s settings have a bad layer") }
        func layer(_ setting: RuleSetting) -> UInt32 { layers >> (2 * UInt32(setting.rawValue)) & 3 }
        let shareExempt = load(\.shareExempt, as: Int32.self)
        let allow = load(\.fileExportAllow, as: Int32.self), deny = load(\.fileExportDeny, as: Int32.self)
        let minVersion = load(\.minVersion, as: Int32.self)
        // -1 (none) only where no layer said a value: the built-in defaults have none.
        func valid(_ index: Int32, _ count: Int, noneAllowed: Bool) -> Bool {
            index >= (noneAllowed ? -1 : 0) && Int(index) < count
        }
        guard valid(shareExempt, tables.appIDGlobLists.count, noneAllowed: false),
              valid(deny, tables.pathGlobLists.count, noneAllowed: false),
              valid(allow, tables.pathGlobLists.count, noneAllowed: layer(.fileExportAllow) == 0),
              valid(minVersion, tables.versions.count, noneAllowed: layer(.minVersion) == 0) else {
            throw SnapshotDamage("app \(record)'s settings point outside the glob lists or versions")
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
