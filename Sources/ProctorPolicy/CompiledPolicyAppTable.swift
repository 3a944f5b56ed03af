/// The app ids of a compiled policy in one open-addressing hash table laid out flat: 16-byte
/// slots (hash, record number with the app's managed flag in the top bit, and where the id
/// sits in the byte arena) and the id bytes in one arena. A lookup hashes the id a word at a
/// time and usually touches one slot line and one arena line; whether another app is managed
/// is answered from the slot without reading the app's record.
///
/// The keys come from the policy (administrator input), not from callers, so a caller can
/// only make a lookup probe the clusters the policy already has: lookups cannot be made
/// slower by crafted ids.
struct AppTable: Sendable {
    struct Slot: Sendable {
        var hash: UInt32
        /// `Slot.empty`, or the record number with `managedBit` set for a managed app.
        var entry: UInt32
        /// The id's bytes are `keyBytes[keyStart..<keyStart + keyLength]`.
        var keyStart: UInt32
        var keyLength: UInt32
    }

    /// What a lookup finds.
    struct Entry {
        let record: Int
        let isManaged: Bool
    }

    static let empty = UInt32.max
    static let managedBit: UInt32 = 1 << 31

    private let slots: [Slot]
    private let mask: Int
    private let keyBytes: [UInt8]

    /// A table of `ids` (unique), record `r` being `ids[r]`; `managed(r)` says whether it is managed.
    init(_ ids: [AppID], managed: (Int) -> Bool) {
        precondition(ids.count < Int(Self.managedBit), "too many apps for one table")
        var capacity = 8
        while capacity < ids.count * 2 { capacity *= 2 }
        var slots = [Slot](repeating: Slot(hash: 0, entry: Self.empty, keyStart: 0, keyLength: 0), count: capacity)
        var keyBytes: [UInt8] = []
        for (record, id) in ids.enumerated() {
            let keyStart = UInt32(keyBytes.count)
            keyBytes.append(contentsOf: id.utf8)
            let hash = Self.withBytes(of: id) { Self.hash($0) }
            var index = Int(truncatingIfNeeded: hash) & (capacity - 1)
            while slots[index].entry != Self.empty { index = (index + 1) & (capacity - 1) }
            slots[index] = Slot(hash: UInt32(truncatingIfNeeded: hash),
                                entry: UInt32(record) | (managed(record) ? Self.managedBit : 0),
                                keyStart: keyStart, keyLength: UInt32(keyBytes.count) - keyStart)
        }
        self.slots = slots
        mask = capacity - 1
        self.keyBytes = keyBytes
    }

    /// The record of `id`, or nil when the policy does not name it.
    func find(_ id: String) -> Entry? {
        Self.withBytes(of: id) { bytes in
            let hash = Self.hash(bytes)
            let shortHash = UInt32(truncatingIfNeeded: hash)
            return slots.withUnsafeBufferPointer { slots in
                keyBytes.withUnsafeBufferPointer { keyBytes in
                    var index = Int(truncatingIfNeeded: hash) & mask
                    while true {
                        let slot = slots[index]
                        if slot.entry == Self.empty { return nil }
                        if slot.hash == shortHash && Int(slot.keyLength) == bytes.count
                            && Self.equal(keyBytes, Int(slot.keyStart), bytes) {
                            return Entry(record: Int(slot.entry & ~Self.managedBit), isManaged: slot.entry & Self.managedBit != 0)
                        }
                        index = (index + 1) & mask
                    }
                }
            }
        }
    }

    private static func equal(_ arena: UnsafeBufferPointer<UInt8>, _ start: Int, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress, let arenaBase = arena.baseAddress else { return bytes.isEmpty }
        return memoryEquals(arenaBase + start, base, bytes.count)
    }

    private static func memoryEquals(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        var offset = 0
        while offset + 8 <= count {
            let x = UnsafeRawPointer(a).loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            let y = UnsafeRawPointer(b).loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            if x != y { return false }
            offset += 8
        }
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

    /// A word-at-a-time multiplicative hash (not for untrusted keys, see the type's comment).
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(bytes.count)
        guard let base = bytes.baseAddress else { return hash }
        let raw = UnsafeRawPointer(base)
        var offset = 0
        while offset + 8 <= bytes.count {
            hash = (hash ^ raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0xFF51_AFD7_ED55_8CCD
            hash ^= hash >> 32
            offset += 8
        }
        if offset < bytes.count {
            var tail: UInt64 = 0
            var shift: UInt64 = 0
            while offset < bytes.count {
                tail |= UInt64(bytes[offset]) << shift
                shift += 8
                offset += 1
            }
            hash = (hash ^ tail) &* 0xC4CE_B9FE_1A85_EC53
        }
        hash ^= hash >> 33
        hash = hash &* 0xFF51_AFD7_ED55_8CCD
        hash ^= hash >> 33
        return hash
    }
}
