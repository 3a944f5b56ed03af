/// The app ids of a compiled policy in one open-addressing hash table laid out flat: one
/// 64-byte slot (a cache line) per position, holding the hash, the app's state and the id's
/// first 48 bytes; longer ids continue in a byte arena. Beside the slots, one tag byte per
/// position (`tags`): a lookup hashes the id a word at a time and probes the tags, 64 to a
/// cache line and small enough to stay in the cache, reading a slot's line only where the tag
/// matches: one line for an id the policy names, almost never one for an id it does not. The
/// app's state (and so whether it is managed) comes from the slot without reading its record.
///
/// The keys come from the policy (administrator input), not from callers, so a caller can
/// only make a lookup probe the clusters the policy already has: lookups cannot be made
/// slower by crafted ids.
///
/// The storage is raw memory owned by the table, written once in `init` and never again,
/// hence `@unchecked Sendable`; a lookup reads it without reference counting.
final class AppTable: @unchecked Sendable {
    struct Slot: Sendable {
        var hash: UInt32
        /// Beside `hash`, so that a probe compares both in one load.
        var keyLength: UInt32
        /// `AppTable.empty`, or the code of the app's state (its index in `states`) in the low
        /// byte and the id's `AppKeyForm` in the next, so that naming a rule of the app needs
        /// no pass over its id.
        var entry: UInt32
        /// Where the id's bytes after the first `inlineKeyBytes` continue in the arena.
        var overflowStart: UInt32
        /// The id's first `inlineKeyBytes` bytes, zero-padded.
        var inlineKey: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)
    }

    static let inlineKeyBytes = 48

    /// The fullest the table may be: at most `ids` per `slots` (the capacity is the smallest
    /// power of two that keeps to it). A slot, its tag and its record cost 129 B, so a table of
    /// one id per two slots would cost 32 MiB at 100 000 apps; at four in five a probe still
    /// reads one slot's line for a hit on average, and its record's line.
    static let maxLoad = (ids: 4, slots: 5)

    /// What a lookup finds: where the id sits in the table (records kept beside the table are
    /// stored at the same position, so their address follows from the hash alone and the CPU
    /// loads them in parallel with the slot instead of after it) and the app's state.
    struct Entry {
        let position: Int
        let state: AppState
        let keyForm: AppKeyForm

        var isManaged: Bool { state == .authorized }

        fileprivate init(position: Int, code: UInt32) {
            self.position = position
            state = AppTable.state(code: code & 0xFF)
            keyForm = switch code >> 8 & 0xFF {
            case 0: .identifier
            case 1: .quoted
            default: .escaped
            }
        }
    }

    static let empty = UInt32.max
    /// The states in the order of their codes.
    static let states: [AppState] = [.authorized, .blocked, .retired]

    private let slots: UnsafeMutableBufferPointer<Slot>
    /// `tags[p]` is 0 for an empty slot, else `tag(of:)` the hash in slot `p`. Worked out from
    /// the slots (so a snapshot need not hold them): linear probing over whole slots read one
    /// 64-byte line per probe, ≈ 3 for an absent id at the table's load.
    private let tags: UnsafeMutableBufferPointer<UInt8>
    /// The number of slots: positions run from 0 to `capacity - 1`.
    var capacity: Int { slots.count }
    /// `positions[r]` is the position of `ids[r]` given to `init`.
    let positions: [Int]
    private let mask: Int
    private let keyBytes: UnsafeMutableBufferPointer<UInt8>
    /// The longest id in the table: a longer one is refused before it is hashed, so a caller's
    /// megabyte-long "id" costs nothing.
    private let longestKey: Int

    /// A table of `ids` (unique), `ids[r]` being in state `state(r)`.
    init(_ ids: [AppID], state: (Int) -> AppState) {
        precondition(ids.count < 1 << 30, "too many apps for one table")
        var capacity = 8
        while capacity * Self.maxLoad.ids < ids.count * Self.maxLoad.slots { capacity *= 2 }
        let emptySlot = Slot(hash: 0, keyLength: 0, entry: Self.empty, overflowStart: 0, inlineKey: (0, 0, 0, 0, 0, 0))
        var slots = [Slot](repeating: emptySlot, count: capacity)
        var keyBytes: [UInt8] = []
        var positions: [Int] = []
        positions.reserveCapacity(ids.count)
        for (record, id) in ids.enumerated() {
            let utf8 = Array(id.utf8)
            var inlineKey: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &inlineKey) { inline in
                for (offset, byte) in utf8.prefix(Self.inlineKeyBytes).enumerated() { inline[offset] = byte }
            }
            let overflowStart = UInt32(keyBytes.count)
            keyBytes.append(contentsOf: utf8.dropFirst(Self.inlineKeyBytes))
            let hash = Self.withBytes(of: id) { Self.hash($0) }
            var index = Int(truncatingIfNeeded: hash) & (capacity - 1)
            while slots[index].entry != Self.empty { index = (index + 1) & (capacity - 1) }
            slots[index] = Slot(hash: UInt32(truncatingIfNeeded: hash), keyLength: UInt32(utf8.count),
                                entry: UInt32(Self.states.firstIndex(of: state(record))!)
                                    | DecisionRule.keyForm(of: id).rawValue << 8,
                                overflowStart: overflowStart, inlineKey: inlineKey)
            positions.append(index)
        }
        self.positions = positions
        let raw = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<Slot>.stride * capacity, alignment: 64)
        self.slots = UnsafeMutableBufferPointer(start: raw.bindMemory(to: Slot.self, capacity: capacity), count: capacity)
        _ = self.slots.initialize(from: slots)
        tags = Self.tags(of: self.slots)
        mask = capacity - 1
        longestKey = ids.map(\.utf8.count).max() ?? 0
        self.keyBytes = UnsafeMutableBufferPointer.allocate(capacity: max(1, keyBytes.count))
        _ = self.keyBytes.initialize(from: keyBytes)
    }

    /// A table from a snapshot (`CompiledPolicySnapshot`), taking ownership of `slots` and
    /// `keyBytes`, which the caller has checked (every occupied slot's key within `keyBytes`).
    init(restoring slots: UnsafeMutableBufferPointer<Slot>, keyBytes: UnsafeMutableBufferPointer<UInt8>, positions: [Int],
         longestKey: Int) {
        self.slots = slots
        tags = Self.tags(of: slots)
        self.keyBytes = keyBytes
        self.positions = positions
        self.longestKey = longestKey
        mask = slots.count - 1
    }

    /// The slots and the key arena as they lie in memory, for a snapshot.
    var rawSlots: UnsafeRawBufferPointer { UnsafeRawBufferPointer(slots) }
    var rawKeyBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(keyBytes) }
    var longestKeyLength: Int { longestKey }

    deinit {
        slots.deallocate()
        tags.deallocate()
        keyBytes.deallocate()
    }

    /// Where `id` sits and its state, or nil when the policy does not name it.
    func find(_ id: String) -> Entry? {
        guard id.utf8.count <= longestKey else { return nil }
        return Self.withBytes(of: id) { find(utf8: $0) }
    }

    /// `find(_:)` for an id given as its UTF-8 bytes.
    func find(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Entry? {
        guard bytes.count <= ShortID.maxCount else { return findLong(bytes) }
        let id = ShortID(bytes)
        return probe(hash: id.hash, count: bytes.count) { id.matches(inlineKey: $0 + Self.inlineKeyOffset) }
    }

    /// `find(utf8:)` for an id longer than a `ShortID`: its words read in a loop, and beyond the
    /// inline key compared with the arena.
    @inline(never)
    private func findLong(_ bytes: UnsafeBufferPointer<UInt8>) -> Entry? {
        guard bytes.count <= longestKey else { return nil }
        return probe(hash: Self.longHash(bytes), count: bytes.count) { slot in
            let base = bytes.baseAddress!, inlineCount = min(bytes.count, Self.inlineKeyBytes)
            let overflowStart = Int(slot.assumingMemoryBound(to: Slot.self).pointee.overflowStart)
            return Self.memoryEquals((slot + Self.inlineKeyOffset).assumingMemoryBound(to: UInt8.self), base, inlineCount)
                && Self.memoryEquals(UnsafePointer(keyBytes.baseAddress! + overflowStart), base + inlineCount,
                                     bytes.count - inlineCount)
        }
    }

    /// The entry of the slot holding an id of `count` bytes and `hash` for which `matches`
    /// (given the slot) is true, or nil: the tags probed from the hash's home position, and a
    /// slot read only where its tag is the hash's, its hash and length compared in one load.
    @inline(__always)
    private func probe(hash: UInt64, count: Int, _ matches: (UnsafeRawPointer) -> Bool) -> Entry? {
        let shortHash = UInt32(truncatingIfNeeded: hash)
        // The slot's first two fields as they lie in memory.
        let header = withUnsafeBytes(of: (shortHash, UInt32(truncatingIfNeeded: count))) { $0.load(as: UInt64.self) }
        let tag = Self.tag(of: shortHash)
        var index = Int(shortHash) & mask
        while true {
            let probe = tags[index]
            if probe == tag {
                let slot = UnsafeRawPointer(slots.baseAddress! + index)
                if slot.load(as: UInt64.self) == header && matches(slot) {
                    return Entry(position: index, code: slot.load(fromByteOffset: Self.entryOffset, as: UInt32.self))
                }
            } else if probe == 0 {
                return nil
            }
            index = (index &+ 1) & mask
        }
    }

    /// The tag of a slot holding `hash`: its top byte, which the position (its low bits, for
    /// any table up to 2^24 slots) does not already tell apart, made non-zero, 0 being empty.
    static func tag(of hash: UInt32) -> UInt8 {
        let byte = UInt8(truncatingIfNeeded: hash >> 24)
        return byte == 0 ? 1 : byte
    }

    private static func tags(of slots: UnsafeMutableBufferPointer<Slot>) -> UnsafeMutableBufferPointer<UInt8> {
        let tags = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: slots.count)
        for (position, slot) in slots.enumerated() {
            (tags.baseAddress! + position).initialize(to: slot.entry == empty ? 0 : tag(of: slot.hash))
        }
        return tags
    }

    /// The id at `position` (one of `positions`), copied out of the slot and the arena: the
    /// table is where a compiled policy keeps its ids, so that it holds no `String` per app.
    func id(at position: Int) -> AppID {
        let slot = slots.baseAddress! + position
        let length = Int(slot.pointee.keyLength)
        let inlineCount = min(length, Self.inlineKeyBytes)
        guard length > 0 else { return "" }
        return String(unsafeUninitializedCapacity: length) { buffer in
            let inline = UnsafeRawPointer(slot).advanced(by: MemoryLayout<Slot>.offset(of: \Slot.inlineKey)!)
            buffer.baseAddress!.initialize(from: inline.assumingMemoryBound(to: UInt8.self), count: inlineCount)
            if length > inlineCount {
                (buffer.baseAddress! + inlineCount).initialize(from: keyBytes.baseAddress! + Int(slot.pointee.overflowStart),
                                                             count: length - inlineCount)
            }
            return length
        }
    }

    /// The state of the app at `position` (one of `positions`).
    func state(at position: Int) -> AppState { Self.state(code: slots[position].entry & 0xFF) }

    private static func state(code: UInt32) -> AppState {
        switch code {
        case 0: .authorized
        case 1: .blocked
        default: .retired
        }
    }

    // Computed, not stored: a `static let` costs a `swift_once` check on every use.
    private static var entryOffset: Int { MemoryLayout<Slot>.offset(of: \Slot.entry)! }
    private static var inlineKeyOffset: Int { MemoryLayout<Slot>.offset(of: \Slot.inlineKey)! }

    /// Whether the `count` bytes at `a` and at `b` are the same, compared a word at a time.
    static func memoryEquals(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        func word(_ bytes: UnsafePointer<UInt8>, _ offset: Int) -> UInt64 {
            UnsafeRawPointer(bytes).loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        }
        var offset = 0
        while offset + 8 <= count {
            if word(a, offset) != word(b, offset) { return false }
            offset += 8
        }
        // The last eight bytes, overlapping words already compared: one load, no loop.
        if offset < count, count >= 8 { return word(a, count - 8) == word(b, count - 8) }
        while offset < count {
            if a[offset] != b[offset] { return false }
            offset += 1
        }
        return true
    }

    static func withBytes<Result>(of text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(text.utf8).withUnsafeBufferPointer(body)
    }

    /// A word-at-a-time multiplicative hash (not for untrusted keys, see the type's comment):
    /// `ShortID.hash` for an id of up to `ShortID.maxCount` bytes, else `longHash`.
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        bytes.count <= ShortID.maxCount ? ShortID(bytes).hash : longHash(bytes)
    }

    /// The hash of a longer id: every whole word, then the last eight bytes.
    private static func longHash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        let raw = UnsafeRawPointer(bytes.baseAddress!), count = bytes.count
        var hash = ShortID.seed(count)
        var offset = 0
        while offset + 8 < count {
            hash = ShortID.mix(hash, raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            offset += 8
        }
        return ShortID.finish(ShortID.mix(hash, raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)))
    }
}
