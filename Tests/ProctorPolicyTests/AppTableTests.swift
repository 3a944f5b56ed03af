@testable import ProctorPolicy
import Testing

/// The app table's tags and the records' layout: a tag only narrows a probe (the id is still
/// compared byte for byte), and a record is one cache line.
@Suite struct AppTableTests {
    /// The 32-bit hash a slot keeps, its tag and home position in a table of `capacity`.
    private static func place(of id: String, capacity: Int) -> (tag: UInt8, home: Int) {
        let hash = UInt32(truncatingIfNeeded: AppTable.withBytes(of: id) { AppTable.hash($0) })
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

    @Test func aRecordIsOneAlignedCacheLine() {
        #expect(MemoryLayout<AppRecord>.stride == 64)
        let engine = CompiledPolicy(Policy(version: "1", apps: ["com.example.notes": AppPolicy()]))
        #expect(Int(bitPattern: engine.storage.records.baseAddress) % 64 == 0)
    }
}
