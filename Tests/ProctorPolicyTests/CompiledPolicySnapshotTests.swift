import JSONCore
@testable import ProctorPolicy
import Testing
import TestSupport

/// A compiled policy written into a snapshot and read back (`CompiledPolicySnapshot`) must be
/// the policy compiled from the JSON: the same rebuilt `policy` (equal, same canonical bytes),
/// ids, managed ids and decisions; and bytes that are not such a snapshot must be refused or,
/// where no check can tell (a value changed within its range — the file's checksum's job),
/// at least never crash.
@Suite struct CompiledPolicySnapshotTests {
    private static func encoded(_ compiled: CompiledPolicy) -> [UInt8] {
        var encoder = SnapshotEncoder()
        compiled.encodeSnapshot(into: &encoder)
        return encoder.bytes
    }

    private static func decoded(_ bytes: [UInt8]) throws(SnapshotDamage) -> CompiledPolicy {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(SnapshotDamage) in
                var decoder = SnapshotDecoder(raw)
                let compiled = try CompiledPolicy(decodingSnapshot: &decoder)
                guard decoder.isAtEnd else { throw SnapshotDamage("bytes left over") }
                return compiled
            }
        }
        return try result.get()
    }

    private func expectRestores(_ policy: Policy, _ comment: Comment? = nil) throws {
        let compiled = CompiledPolicy(policy)
        let restored = try Self.decoded(Self.encoded(compiled))
        let rebuilt = restored.policy
        #expect(rebuilt == policy, comment)
        #expect(rebuilt.canonicalBytes == policy.canonicalBytes, comment)
        #expect(rebuilt.sha256 == policy.sha256, comment)
        #expect(restored.version == policy.version && restored.appCount == policy.apps.count, comment)
        #expect(restored.appIDs == compiled.appIDs, comment)
        #expect(restored.managedAppIDs == compiled.managedAppIDs, comment)
        #expect(restored.isCompiled(from: policy), comment)
        // Written again, the restored policy gives the same bytes.
        #expect(Self.encoded(restored) == Self.encoded(compiled), comment)
        var generator = SeededGenerator(seed: UInt64(policy.apps.count) &+ 0x5EED)
        for request in Self.randomRequests(for: policy, count: 400, using: &generator) {
            #expect(restored.decide(request) == compiled.decide(request), "\(request)")
        }
    }

    /// `launch` compares the app's version with its minimum by precedence (the numbers, then
    /// pre-release identifiers; build metadata ignored), compiled or restored from a snapshot:
    /// versions on either side of minimums with and without pre-release identifiers.
    @Test func launchComparesVersionsByPrecedence() throws {
        let minimums = ["2.3.4", "2.3.4-rc.1", "2.3.4-alpha", "0.0.1", "10.0.0-1"].map { SemanticVersion($0)! }
        let versions = ["2.3.4", "2.3.4+build.7", "2.3.4-rc.2", "2.3.4-rc.1", "2.3.4-rc.1+b", "2.3.4-rc", "2.3.4-1", "2.3.4-beta",
                        "2.3.4-alpha.1", "2.3.5-a", "2.3.3", "2.4.0", "3.0.0-0", "1.9.9", "0.0.1-x", "0.0.0", "10.0.0-0",
                        "10.0.0-2", "10.0.0", "9.99.99"].map { SemanticVersion($0)! }
        let apps = Dictionary(uniqueKeysWithValues: minimums.enumerated().map { index, minimum in
            ("app\(index)", AppPolicy(settings: AppSettings(compliance: ComplianceSettings(minVersion: minimum, onViolation: .block))))
        })
        let compiled = CompiledPolicy(Policy(version: "1", apps: apps))
        let restored = try Self.decoded(Self.encoded(compiled))
        for (index, minimum) in minimums.enumerated() {
            for version in versions + [nil] {
                let request = DecisionRequest(app: "app\(index)", action: .launch, appVersion: version)
                let meets = version.map { $0 >= minimum } ?? false
                #expect(compiled.decide(request).allowed == meets && restored.decide(request).allowed == meets,
                        "\(version?.description ?? "no version") against \(minimum)")
            }
        }
    }

    @Test func restoresGeneratedPolicies() throws {
        var generator = SeededGenerator(seed: 0x5AA9)
        for round in 0..<30 {
            var policy = CompiledPolicyRebuildTests.randomPolicy(apps: round * 11, using: &generator)
            // The generator does not keep to the rule a policy's parser checks (offlineWipeSeconds
            // above offlineGraceSeconds); a snapshot only ever holds a policy that was parsed,
            // and reads its version and defaults back through the parser.
            if let wipe = policy.defaults.compliance.offlineWipeSeconds, wipe <= policy.defaults.compliance.offlineGraceSeconds ?? BuiltinDefaults.offlineGraceSeconds {
                policy.defaults.compliance.offlineWipeSeconds = nil
            }
            try expectRestores(policy, "round \(round)")
        }
    }

    @Test func restoresOddPolicies() throws {
        let long = "com." + String(repeating: "very-long-segment.", count: 6) + "app"  // beyond the table's inline 48 bytes
        let defaults = AppSettings(dlp: DLPSettings(clipboardLevel: .managed, shareExempt: ["com.example.*"],
                                                    fileExportDeny: ["/tmp/**"], fileExportEnforcement: .advisory),
                                   compliance: ComplianceSettings(minVersion: SemanticVersion("1.2.3+build.a"), offlineWipeSeconds: 60))
        let apps: [AppID: AppPolicy] = [
            long: AppPolicy(match: MatchRule(executable: "/opt/Ünïcode \"quoted\"\\path\u{1}/bin", users: [])),
            long + ".twin": AppPolicy(state: .blocked),
            "a.b": AppPolicy(state: .blocked, match: MatchRule()),
            "0-x.1-y": AppPolicy(state: .retired, config: ["text": "tab\tquote\"slash\\nul\u{0}é😀", "nested": ["a": [1, 2.5, nil, true]],
                                                           "empty": [:], "big": 1e300, "negative": -0.125]),
            "com.example.build-b": AppPolicy(settings: AppSettings(compliance: ComplianceSettings(
                minVersion: SemanticVersion("1.2.3+build.b")))),
            "com.example.pre": AppPolicy(settings: AppSettings(compliance: ComplianceSettings(minVersion: SemanticVersion("1.2.3-rc.1")))),
            "com.example.two-parts": AppPolicy(settings: AppSettings(compliance: ComplianceSettings(minVersion: SemanticVersion("2.3")))),
            "quote\"d": AppPolicy(settings: AppSettings(dlp: DLPSettings(fileExportAllow: [], fileExportEnforcement: .kernel))),
        ]
        try expectRestores(Policy(version: "odd+meta", defaults: defaults, apps: apps))
        try expectRestores(Policy(version: "empty"))
        try expectRestores(try PolicyDirectory.load(PolicyTestSupport.repositoryRoot + "/config/examples").policy)
    }

    @Test func everyTruncationIsRefused() throws {
        var generator = SeededGenerator(seed: 0x7A)
        let bytes = Self.encoded(CompiledPolicy(CompiledPolicyRebuildTests.randomPolicy(apps: 12, using: &generator)))
        for length in 0..<bytes.count {
            #expect(throws: SnapshotDamage.self) { try Self.decoded(Array(bytes[..<length])) }
        }
    }

    /// Counts, lengths, positions and indices made larger (or smaller) than what they point
    /// into, and enums' bytes beyond their cases, are all refused.
    @Test func structureOutOfRangeIsRefused() throws {
        let policy = Policy(version: "v", apps: [
            "com.a": AppPolicy(match: MatchRule(executable: "/usr/bin/a", users: ["alice"]), config: ["k": 1]),
            "com.b." + String(repeating: "x", count: 60): AppPolicy(state: .blocked),
        ])
        let bytes = Self.encoded(CompiledPolicy(policy))
        var refused = 0
        // Every 8-byte little-endian field that holds a small count or length, made huge, one
        // larger, and negative.
        for offset in 0..<(bytes.count - 8) {
            let value = bytes[offset..<offset + 8].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            guard value > 0, value < 1 << 20 else { continue }
            for replacement: UInt64 in [value + 1, 1 << 40, UInt64.max] {
                var changed = bytes
                for index in 0..<8 { changed[offset + index] = UInt8(truncatingIfNeeded: replacement >> (8 * UInt64(index))) }
                if (try? Self.decoded(changed)) == nil { refused += 1 }
            }
        }
        #expect(refused > 30)
        // Each byte set to 0xFF (an enum's code, a layer, a flag, an index's high byte).
        for offset in bytes.indices where bytes[offset] != 0xFF {
            var changed = bytes
            changed[offset] = 0xFF
            _ = try? Self.decoded(changed)  // refused or a policy: never a crash
        }
    }

    /// Where the table's parts start in a snapshot (each after its length), and its capacity.
    /// (A struct: a tuple returned from the typed-throws closure crashes Swift 6.3.1's SILGen.)
    private struct TableLayout {
        let capacity: Int, slots: Int, tags: Int, positions: Int
    }

    private static func tableLayout(_ bytes: [UInt8]) throws -> TableLayout {
        try bytes.withUnsafeBytes { raw throws(SnapshotDamage) in
            var decoder = SnapshotDecoder(raw)
            _ = try decoder.readString("head")
            let capacity = try decoder.readInt("capacity")
            _ = try decoder.readInt("count")
            _ = try decoder.readInt("longest")
            let slots = decoder.offset + 8
            _ = try decoder.readRaw("slots", count: capacity, stride: MemoryLayout<AppTable.Slot>.stride)
            let tags = decoder.offset + 8
            _ = try decoder.readRaw("tags", count: capacity, stride: 1)
            _ = try decoder.take(try decoder.readInt("arena length"), "arena")
            _ = try decoder.take(try decoder.readInt("overflow starts length"), "overflow starts")
            _ = try decoder.readInt("positions length")
            return TableLayout(capacity: capacity, slots: slots, tags: tags, positions: decoder.offset)
        }
    }

    /// The offset of the table's positions in `bytes` (after their length).
    private static func positionsStart(_ bytes: [UInt8]) throws -> Int { try tableLayout(bytes).positions }

    /// A tag is where, and only where, a slot holds an app: a tag at an empty slot (which a
    /// lookup of an id with that tag would read as an app) and an occupied slot without its
    /// tag (whose app no lookup would find) are both refused.
    @Test func aTagWithoutItsAppOrAnAppWithoutItsTagIsRefused() throws {
        let bytes = Self.encoded(CompiledPolicy(Policy(version: "v", apps: ["com.a": AppPolicy(), "com.b": AppPolicy()])))
        let layout = try Self.tableLayout(bytes)
        #expect(try Self.decoded(bytes).appCount == 2)
        let tags = Array(bytes[layout.tags..<layout.tags + layout.capacity])
        let empty = try #require(tags.firstIndex(of: 0)), occupied = try #require(tags.firstIndex { $0 != 0 })
        var strayTag = bytes
        strayTag[layout.tags + empty] = 1
        #expect(throws: SnapshotDamage.self) { try Self.decoded(strayTag) }
        var missingTag = bytes
        missingTag[layout.tags + occupied] = 0
        #expect(throws: SnapshotDamage.self) { try Self.decoded(missingTag) }
    }

    /// Each enum of the settings kept in an app's slot, set beyond its cases, is refused before
    /// any decision could read it.
    @Test func aSlotsSettingsOutOfRangeAreRefused() throws {
        let bytes = Self.encoded(CompiledPolicy(Policy(version: "v", apps: ["com.a": AppPolicy()])))
        let layout = try Self.tableLayout(bytes)
        let occupied = try #require(bytes[layout.tags..<layout.tags + layout.capacity].firstIndex { $0 != 0 }) - layout.tags
        let settings = layout.slots + occupied * MemoryLayout<AppTable.Slot>.stride + AppTable.settingsOffset
        let enums: [PartialKeyPath<DecisionSettings>] = [\.clipboardLevel, \.shareSend, \.shareReceive, \.print,
                                                         \.screenCapture, \.notifications, \.onViolation,
                                                         \.fileExportEnforcement]
        for field in enums {
            var changed = bytes
            changed[settings + MemoryLayout<DecisionSettings>.offset(of: field)!] = 0xFF
            #expect(throws: SnapshotDamage.self) { try Self.decoded(changed) }
        }
        var badList = bytes
        badList[settings + MemoryLayout<DecisionSettings>.offset(of: \.shareExempt)!] = 0x7F
        #expect(throws: SnapshotDamage.self) { try Self.decoded(badList) }
    }

    /// Two records at one position of the table (found by the `snapshot` fuzz target): the slot
    /// no position names would have no record, read uninitialised by a decision for its app.
    @Test func aPositionListedTwiceIsRefused() throws {
        let policy = Policy(version: "v", apps: ["com.a": AppPolicy(), "com.b": AppPolicy()])
        var bytes = Self.encoded(CompiledPolicy(policy))
        let positionsStart = try Self.positionsStart(bytes)
        #expect(try Self.decoded(bytes).appCount == 2)
        bytes.replaceSubrange(positionsStart + 4..<positionsStart + 8, with: bytes[positionsStart..<positionsStart + 4])
        #expect(throws: SnapshotDamage.self) { try Self.decoded(bytes) }
    }

    /// A snapshot in the layout before an app's settings moved into its table slot (a 64-byte
    /// record each after the positions, where the offline limits are now) is refused, so a
    /// start rebuilds the policy from its JSON (besides the build id in the file's key, which
    /// already tells another binary's apart).
    @Test func recordsOfTheEarlierLayoutAreRefused() throws {
        let policy = Policy(version: "v", apps: ["com.a": AppPolicy(), "com.b": AppPolicy(state: .blocked)])
        let bytes = Self.encoded(CompiledPolicy(policy))
        let count = policy.apps.count
        // Where the offline limits' length is: after the positions, four bytes each.
        let recordsStart = try Self.positionsStart(bytes) + count * 4
        let stride = MemoryLayout<OfflineSeconds>.stride, earlierStride = 64
        var earlier = Array(bytes[..<recordsStart])
        withUnsafeBytes(of: Int64(count * earlierStride).littleEndian) { earlier += $0 }
        for record in 0..<count {
            let start = recordsStart + 8 + record * stride
            earlier += bytes[start..<start + stride] + [UInt8](repeating: 0, count: earlierStride - stride)
        }
        earlier += bytes[(recordsStart + 8 + count * stride)...]
        #expect(try Self.decoded(bytes).appCount == 2)
        #expect(throws: SnapshotDamage.self) { try Self.decoded(earlier) }
    }

    /// Single bits flipped anywhere: refused, or (a value changed within its range, which only
    /// the file's checksum catches) a policy that still answers without crashing.
    @Test func flippedBitsNeverCrash() throws {
        var generator = SeededGenerator(seed: 0xF1)
        let policy = CompiledPolicyRebuildTests.randomPolicy(apps: 9, using: &generator)
        let bytes = Self.encoded(CompiledPolicy(policy))
        let requests = Self.randomRequests(for: policy, count: 20, using: &generator)
        for offset in bytes.indices {
            for bit in [0, 3, 7] {
                var changed = bytes
                changed[offset] ^= 1 << bit
                guard let restored = try? Self.decoded(changed) else { continue }
                for request in requests { _ = restored.decide(request) }
                _ = restored.policy
            }
        }
    }

    @Test func theChecksumIsXXH64() {
        func xxh64(_ text: String) -> UInt64 { Array(text.utf8).withUnsafeBytes { SnapshotChecksum.xxh64($0) } }
        // The reference implementation's values (xxhsum -H1).
        #expect(xxh64("") == 0xEF46_DB37_51D8_E999)
        #expect(xxh64("a") == 0xD24E_C4F1_A98C_6E5B)
        #expect(xxh64("abc") == 0x44BC_2CF5_AD77_0999)
        #expect(xxh64("Nobody inspects the spammish repetition") == 0xFBCE_A83C_8A37_8BF1)
    }

    /// Requests of every action by the policy's apps and unknown ones, towards its apps,
    /// unknown ones, paths and nothing.
    static func randomRequests(for policy: Policy, count: Int, using generator: inout SeededGenerator) -> [DecisionRequest] {
        let ids = policy.apps.keys.sorted() + ["com.unknown", "", "com.random.app"]
        let targets: [String?] = ids.map { $0 } + [nil, "/tmp/x", "/home/u/Documents/a.pdf", "/srv/x/y.pdf", "org", "plain"]
        let versions = ["0.9", "1.0.0", "2.3.1", "1.0.0-alpha.1", "10.20.30"].compactMap { SemanticVersion($0) }
        return (0..<count).map { _ in
            DecisionRequest(app: ids.randomElement(using: &generator)!, action: Action.allCases.randomElement(using: &generator)!,
                            target: targets.randomElement(using: &generator)!,
                            size: Bool.random(using: &generator) ? Int.random(in: 0...200_000, using: &generator) : nil,
                            appVersion: Bool.random(using: &generator) ? versions.randomElement(using: &generator) : nil)
        }
    }
}
