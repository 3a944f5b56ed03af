@testable import ProctorPolicy
import Testing

/// The app table's tags and its slots' layout: a tag only narrows a probe (the id is still
/// compared byte for byte), and a slot, with what a decision reads of its app, is one cache line.
@Suite struct AppTableTests {
    /// An id's tag and home position in a table of `capacity`.
    private static func place(of id: String, capacity: Int) -> (tag: UInt8, home: Int) {
        place(of: Array(id.utf8), capacity: capacity)
    }

    private static func place(of id: [UInt8], capacity: Int) -> (tag: UInt8, home: Int) {
        let hash = UInt32(truncatingIfNeeded: id.withUnsafeBufferPointer { AppTable.hash($0) })
        return (AppTable.tag(of: hash), Int(hash) & (capacity - 1))
    }

    /// Ids made to share a tag and a home position with an id in the table: those in it are
    /// each found at their own position, those not in it are not found.
    @Test func idsSharingATagAndAHomeAreToldApartByTheirBytes() throws {
        let present = "com.example.notes"
        let table = AppTable([present]) { _ in .authorized }
        let capacity = table.capacity
        let target = Self.place(of: present, capacity: capacity)
        let twins = (0..<200_000).lazy.map { "com.example.twin\($0)" }
            .filter { Self.place(of: $0, capacity: capacity) == target }.prefix(3)
        let found = Array(twins)
        try #require(found.count == 3, "no ids sharing the tag and home of \(present) among those tried")
        for twin in found { #expect(table.find(twin) == nil, "\(twin)") }

        let crowded = AppTable([present] + found.prefix(2)) { _ in .authorized }
        let positions = ([present] + found.prefix(2)).map { crowded.find($0)?.position }
        #expect(!positions.contains(nil) && Set(positions).count == 3)
        for (id, position) in zip([present] + found.prefix(2), positions) { #expect(crowded.id(at: position!) == id) }
        #expect(crowded.find(found[2]) == nil)
    }

    /// An id of `count` bytes, valid UTF-8: ASCII letters, NUL and non-ASCII (a 2-byte "é").
    private static func id(count: Int) -> [UInt8] {
        (0..<count).map { offset in
            switch offset % 7 {
            case 3: 0
            case 5 where offset + 1 < count: 0xC3
            case 6: 0xA9
            default: UInt8(ascii: "a") + UInt8(offset % 26)
            }
        }
    }

    private static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    /// Ids of every length from 0 to 70 bytes (one word, two, three, the inline key's 24 and
    /// past it into the arena), each found at its own position, by `String` and by bytes;
    /// ids differing from one of them only in the last byte, the first or the middle, one byte
    /// shorter or longer, or only in trailing NUL bytes (which the zero-padded inline key does
    /// not tell apart) are not found.
    @Test func idsOfEveryLengthAreFoundAndTheirNeighboursAreNot() throws {
        let lengths = Array(0...70)
        let ids = lengths.map { Self.id(count: $0) }
        // Each must survive the round trip through `String` as the same bytes.
        try #require(ids.allSatisfy { Array(Self.text($0).utf8) == $0 })
        let table = AppTable(ids.map(Self.text)) { $0 % 3 == 0 ? .blocked : .authorized }
        for (record, id) in ids.enumerated() {
            let entry = try #require(table.find(Self.text(id)), "length \(id.count)")
            #expect(entry.position == table.positions[record])
            #expect(entry.state == (record % 3 == 0 ? .blocked : .authorized))
            #expect(table.id(at: entry.position) == Self.text(id))
            #expect(id.withUnsafeBufferPointer { table.find(utf8: $0)?.position } == entry.position)
        }
        let known = Set(ids)
        for id in ids where !id.isEmpty {
            var neighbours: [[UInt8]] = []
            for offset in Set([0, id.count / 2, id.count - 1]) {
                var changed = id
                changed[offset] ^= 0x01
                neighbours.append(changed)
            }
            neighbours.append(id + [0])
            neighbours.append(id + [0, 0])
            neighbours.append(id + [UInt8(ascii: "z")])
            for neighbour in neighbours where !known.contains(neighbour) {
                #expect(neighbour.withUnsafeBufferPointer { table.find(utf8: $0) } == nil,
                        "length \(neighbour.count), from \(id.count)")
            }
        }
        #expect(table.find("\u{0}") == nil)
        #expect(Array("\u{0}".utf8).withUnsafeBufferPointer { table.find(utf8: $0) } == nil)
    }

    /// As `idsSharingATagAndAHomeAreToldApartByTheirBytes`, for ids of each way a lookup reads
    /// them: one word, two, three (`ShortID`, within the inline key), and longer, past it.
    @Test(arguments: [5, 12, 16, 17, 23, 24, 25, 31, 40, 60])
    func absentIdsWithAnOccupiedTagAndHomeAreNotFound(count: Int) throws {
        let present = Self.id(count: count)
        let table = AppTable([Self.text(present)]) { _ in .authorized }
        let target = Self.place(of: present, capacity: table.capacity)
        // Same length, differing in the last byte only (the candidates' middle bytes vary too).
        let twins = (0..<400_000).lazy.map { candidate -> [UInt8] in
            var bytes = present
            bytes[count - 1] = UInt8(ascii: "A") + UInt8(candidate % 26)
            bytes[count / 2] = UInt8(ascii: "A") + UInt8(candidate / 26 % 26)
            if count > 2 { bytes[1] = UInt8(ascii: "A") + UInt8(candidate / 676 % 26) }
            return bytes
        }.filter { $0 != present && Self.place(of: $0, capacity: table.capacity) == target }.prefix(2)
        let found = Array(twins)
        try #require(!found.isEmpty, "no id sharing the tag and home of the \(count)-byte id among those tried")
        for twin in found { #expect(twin.withUnsafeBufferPointer { table.find(utf8: $0) } == nil) }
        #expect(table.find(Self.text(present))?.position == table.positions[0])
    }

    /// A slot is matched by its id's length as well as its tag and bytes: an id that is
    /// another's with a NUL appended (the same zero-padded words) is not found in a slot of the
    /// shorter id under the longer one's tag (made here directly, as a collision of the two
    /// tags and homes would make it).
    @Test func anIdIsMatchedByItsLengthNotOnlyByItsZeroPaddedBytes() {
        let absent: [UInt8] = [UInt8(ascii: "a"), 0]
        let capacity = 8, (tag, position) = Self.place(of: absent, capacity: capacity)
        let slots = AppTable.emptySlots(capacity: capacity)
        slots[position] = AppTable.Slot(inlineKey: (UInt64(UInt8(ascii: "a")).littleEndian, 0, 0), settings: Self.settings,
                                        keyLength: 1, entry: 0, reserved: 0)
        let tags = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: capacity)
        tags.initialize(repeating: 0)
        tags[position] = tag
        let keyBytes = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 1)
        keyBytes.initialize(repeating: 0)
        let table = AppTable(restoring: slots, tags: tags, keyBytes: keyBytes, overflowStarts: [], positions: [position],
                             longestKey: 2)
        #expect(table.id(at: position) == "a")
        #expect(absent.withUnsafeBufferPointer { table.find(utf8: $0) } == nil)
    }

    /// A small string (up to 15 bytes, kept inside the `String` value) and a native one, and a
    /// `Substring`'s copy, are found alike.
    @Test func theFormOfAStringDoesNotMatter() {
        let ids = ["com.a.b", "com.example.notes", "x"]
        let table = AppTable(ids) { _ in .authorized }
        for (record, id) in ids.enumerated() {
            let copied = String(decoding: Array(id.utf8), as: UTF8.self)
            let sliced = String(("<" + id + ">").dropFirst().dropLast())
            #expect(table.find(copied)?.position == table.positions[record])
            #expect(table.find(sliced)?.position == table.positions[record])
        }
    }

    /// A slot fills a cache line with no padding (whose bytes a snapshot would carry), and
    /// the slots start on a line.
    @Test func aSlotIsOneAlignedCacheLine() {
        #expect(MemoryLayout<AppTable.Slot>.size == 64 && MemoryLayout<AppTable.Slot>.stride == 64)
        let engine = CompiledPolicy(Policy(version: "1", apps: ["com.example.notes": AppPolicy()]))
        #expect(Int(bitPattern: engine.storage.table.rawSlots.baseAddress) % 64 == 0)
    }

    /// The built-in settings, which every table here gives its apps.
    fileprivate static let settings: DecisionSettings = {
        var tables = CompiledTables()
        return tables.builtinSettings().decision
    }()
}

extension AppTable {
    /// A table of `ids` in states `state(r)`, each with the built-in settings.
    fileprivate convenience init(_ ids: [AppID], state: (Int) -> AppState) {
        self.init(ids) { (state($0), AppTableTests.settings) }
    }
}
