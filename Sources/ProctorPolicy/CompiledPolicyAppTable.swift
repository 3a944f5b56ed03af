/// The apps of a compiled policy in one open-addressing hash table laid out flat: one 64-byte
/// slot (a cache line) per position, holding the id's first 24 bytes, its length and state,
/// and the settings a decision reads of the app (`DecisionSettings`), so that a decision about
/// an app reads one line of it; longer ids continue in a byte arena. Beside the slots, one tag
/// byte per position (`tags`): a lookup hashes the id a word at a time and probes the tags, 64
/// to a cache line and small enough to stay in the cache, reading a slot's line only where the
/// tag matches: one line for an id the policy names, almost never one for an id it does not.
///
/// The keys come from the policy (administrator input), not from callers, so a caller can
/// only make a lookup probe the clusters the policy already has: lookups cannot be made
/// slower by crafted ids.
///
/// The storage is raw memory owned by the table, written once in `init` and never again,
/// hence `@unchecked Sendable`; a lookup reads it without reference counting.
final class AppTable: @unchecked Sendable {
    struct Slot: Sendable {
        /// The id's first `inlineKeyBytes` bytes, zero-padded.
        var inlineKey: (UInt64, UInt64, UInt64)
        /// What a decision reads of the app (all zero in an empty slot).
        var settings: DecisionSettings
        var keyLength: UInt16
        /// `AppTable.empty`, or the code of the app's state (its index in `states`) in the low
        /// two bits and the id's `AppKeyForm` in the next two, so that naming a rule of the app
        /// needs no pass over its id.
        var entry: UInt8
        /// Zero: a slot has no padding, whose bytes a snapshot would carry.
        var reserved: UInt8
    }

    static let inlineKeyBytes = 24

    /// The fullest the table may be: at most `ids` per `slots` (the capacity is the smallest
    /// power of two that keeps to it). A slot and its tag cost 65 B, so a table of one id per
    /// two slots would cost 16 MiB at 100 000 apps; at four in five a probe still reads one
    /// slot's line for a hit on average.
    static let maxLoad = (ids: 4, slots: 5)

    /// What a lookup finds: where the id sits in the table (where `settings(at:)` reads what a
    /// decision needs of it) and the app's state.
    struct Entry {
        let position: Int
        let state: AppState
        let keyForm: AppKeyForm

        var isManaged: Bool { state == .authorized }

        fileprivate init(position: Int, code: UInt8) {
            self.position = position
            state = AppTable.state(code: code & 3)
            keyForm = switch code >> 2 {
            case 0: .identifier
            case 1: .quoted
            default: .escaped
            }
        }
    }

    static let empty = UInt8.max
    /// The states in the order of their codes.
    static let states: [AppState] = [.authorized, .blocked, .retired]

    private let slots: UnsafeMutableBufferPointer<Slot>
    /// `tags[p]` is 0 for an empty slot, else `tag(of:)` the hash of the id in slot `p`.
    private let tags: UnsafeMutableBufferPointer<UInt8>
    /// The number of slots: positions run from 0 to `capacity - 1`.
    var capacity: Int { slots.count }
    /// `positions[r]` is the position of `ids[r]` given to `init`.
    let positions: [Int]
    private let mask: Int
    private let keyBytes: UnsafeMutableBufferPointer<UInt8>
    /// Where the bytes after the first `inlineKeyBytes` of the id at position `p` continue in
    /// `keyBytes`: `overflowStarts[p]`. Empty when no id is that long (nearly every policy).
    let overflowStarts: [UInt32]
    /// The longest id in the table: a longer one is refused before it is hashed, so a caller's
    /// megabyte-long "id" costs nothing.
    private let longestKey: Int

    /// A table of `ids` (unique), `ids[r]` being in state `app(r).state`, with `app(r).settings`.
    init(_ ids: [AppID], _ app: (Int) -> (state: AppState, settings: DecisionSettings)) {
        precondition(ids.count < 1 << 30, "too many apps for one table")
        var capacity = 8
        while capacity * Self.maxLoad.ids < ids.count * Self.maxLoad.slots { capacity *= 2 }
        let slots = Self.emptySlots(capacity: capacity)
        let tags = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: capacity)
        tags.initialize(repeating: 0)
        let longestKey = ids.map(\.utf8.count).max() ?? 0
        precondition(longestKey <= Int(UInt16.max), "an app id longer than a slot can say")
        var keyBytes: [UInt8] = []
        var overflowStarts = longestKey > Self.inlineKeyBytes ? [UInt32](repeating: 0, count: capacity) : []
        var positions: [Int] = []
        positions.reserveCapacity(ids.count)
        for (record, id) in ids.enumerated() {
            let utf8 = Array(id.utf8)
            let hash = UInt32(truncatingIfNeeded: Self.withBytes(of: id) { Self.hash($0) })
            var index = Int(hash) & (capacity - 1)
            while tags[index] != 0 { index = (index + 1) & (capacity - 1) }
            tags[index] = Self.tag(of: hash)
            let (state, settings) = app(record)
            var slot = Slot(inlineKey: (0, 0, 0), settings: settings, keyLength: UInt16(utf8.count),
                            entry: UInt8(Self.states.firstIndex(of: state)!) | DecisionRule.keyForm(of: id).rawValue << 2,
                            reserved: 0)
            withUnsafeMutableBytes(of: &slot.inlineKey) { inline in
                for (offset, byte) in utf8.prefix(Self.inlineKeyBytes).enumerated() { inline[offset] = byte }
            }
            slots[index] = slot
            if utf8.count > Self.inlineKeyBytes {
                overflowStarts[index] = UInt32(keyBytes.count)
                keyBytes.append(contentsOf: utf8.dropFirst(Self.inlineKeyBytes))
            }
            positions.append(index)
        }
        self.slots = slots
        self.tags = tags
        self.positions = positions
        self.overflowStarts = overflowStarts
        mask = capacity - 1
        self.longestKey = longestKey
        self.keyBytes = UnsafeMutableBufferPointer.allocate(capacity: max(1, keyBytes.count))
        _ = self.keyBytes.initialize(from: keyBytes)
    }

    /// `capacity` empty slots in memory aligned to a cache line: all bytes zero but `entry`.
    static func emptySlots(capacity: Int) -> UnsafeMutableBufferPointer<Slot> {
        let slots = uninitializedSlots(capacity: capacity)
        UnsafeMutableRawBufferPointer(slots).initializeMemory(as: UInt8.self, repeating: 0)
        for index in 0..<capacity { slots[index].entry = empty }
        return slots
    }

    /// Room for `capacity` slots aligned to a cache line, for their bytes to be copied in.
    static func uninitializedSlots(capacity: Int) -> UnsafeMutableBufferPointer<Slot> {
        let raw = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<Slot>.stride * capacity, alignment: 64)
        return UnsafeMutableBufferPointer(start: raw.bindMemory(to: Slot.self, capacity: capacity), count: capacity)
    }

    /// A table from a snapshot (`CompiledPolicySnapshot`), taking ownership of `slots`, `tags`
    /// and `keyBytes`, which the caller has checked (every occupied slot's key within
    /// `keyBytes`, a tag where and only where a slot is occupied).
    init(restoring slots: UnsafeMutableBufferPointer<Slot>, tags: UnsafeMutableBufferPointer<UInt8>,
         keyBytes: UnsafeMutableBufferPointer<UInt8>, overflowStarts: [UInt32], positions: [Int], longestKey: Int) {
        self.slots = slots
        self.tags = tags
        self.keyBytes = keyBytes
        self.overflowStarts = overflowStarts
        self.positions = positions
        self.longestKey = longestKey
        mask = slots.count - 1
    }

    /// The slots, tags and key arena as they lie in memory, for a snapshot.
    var rawSlots: UnsafeRawBufferPointer { UnsafeRawBufferPointer(slots) }
    var rawTags: UnsafeRawBufferPointer { UnsafeRawBufferPointer(tags) }
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
        return probe(hash: id.hash, count: bytes.count) { slot, _ in id.matches(inlineKey: slot) }
    }

    /// `find(utf8:)` for an id longer than a `ShortID`: its words read in a loop, and beyond the
    /// inline key compared with the arena.
    @inline(never)
    private func findLong(_ bytes: UnsafeBufferPointer<UInt8>) -> Entry? {
        guard bytes.count <= longestKey else { return nil }
        return probe(hash: Self.longHash(bytes), count: bytes.count) { slot, index in
            // Longer than a `ShortID`, so longer than the inline key: the rest is in the arena.
            let base = bytes.baseAddress!
            return Self.memoryEquals(slot.assumingMemoryBound(to: UInt8.self), base, Self.inlineKeyBytes)
                && Self.memoryEquals(UnsafePointer(keyBytes.baseAddress! + Int(overflowStarts[index])),
                                     base + Self.inlineKeyBytes, bytes.count - Self.inlineKeyBytes)
        }
    }

    /// The entry of the slot holding an id of `count` bytes (at most `longestKey`) and `hash`
    /// for which `matches` (given the slot and its position) is true, or nil: the tags probed from the hash's
    /// home position, and a slot read only where its tag is the hash's.
    @inline(__always)
    private func probe(hash: UInt64, count: Int, _ matches: (UnsafeRawPointer, Int) -> Bool) -> Entry? {
        let shortHash = UInt32(truncatingIfNeeded: hash)
        let tag = Self.tag(of: shortHash), length = UInt16(truncatingIfNeeded: count)
        var index = Int(shortHash) & mask
        while true {
            let probe = tags[index]
            if probe == tag {
                let slot = UnsafeRawPointer(slots.baseAddress! + index)
                if slot.load(fromByteOffset: Self.keyLengthOffset, as: UInt16.self) == length && matches(slot, index) {
                    return Entry(position: index, code: slot.load(fromByteOffset: Self.entryOffset, as: UInt8.self))
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

    /// The id at `position` (one of `positions`), copied out of the slot and the arena: the
    /// table is where a compiled policy keeps its ids, so that it holds no `String` per app.
    func id(at position: Int) -> AppID {
        let slot = slots.baseAddress! + position
        let length = Int(slot.pointee.keyLength)
        let inlineCount = min(length, Self.inlineKeyBytes)
        guard length > 0 else { return "" }
        return String(unsafeUninitializedCapacity: length) { buffer in
            buffer.baseAddress!.initialize(from: UnsafeRawPointer(slot).assumingMemoryBound(to: UInt8.self), count: inlineCount)
            if length > inlineCount {
                (buffer.baseAddress! + inlineCount).initialize(from: keyBytes.baseAddress! + Int(overflowStarts[position]),
                                                             count: length - inlineCount)
            }
            return length
        }
    }

    /// The state of the app at `position` (one of `positions`).
    func state(at position: Int) -> AppState { Self.state(code: slots[position].entry & 3) }

    /// What a decision reads of the app at `position` (one of `positions`), in place.
    @inline(__always)
    func settings(at position: Int) -> UnsafePointer<DecisionSettings> {
        UnsafeRawPointer(slots.baseAddress! + position).advanced(by: Self.settingsOffset)
            .assumingMemoryBound(to: DecisionSettings.self)
    }

    private static func state(code: UInt8) -> AppState {
        switch code {
        case 0: .authorized
        case 1: .blocked
        default: .retired
        }
    }

    // Computed, not stored: a `static let` costs a `swift_once` check on every use.
    private static var entryOffset: Int { MemoryLayout<Slot>.offset(of: \Slot.entry)! }
    private static var keyLengthOffset: Int { MemoryLayout<Slot>.offset(of: \Slot.keyLength)! }
    static var settingsOffset: Int { MemoryLayout<Slot>.offset(of: \Slot.settings)! }

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
