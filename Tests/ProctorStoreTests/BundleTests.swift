import JSONCore
import ProctorPolicy
import Testing
import TestSupport
@testable import ProctorStore

@Suite struct BundleTests {
    let directory: StoreDirectory
    init() throws { directory = try StoreDirectory() }

    @Test func applyMakesTheNewestBundleCurrentWithItsDigest() throws {
        let store = try directory.openStore()
        #expect(try store.currentBundle() == nil)
        #expect(try store.history().isEmpty)

        let first = try store.apply(version: "1", canonicalJSON: policyText("1"), expectedVersion: nil, at: 10, byUID: 1000)
        let second = try store.apply(version: "2", canonicalJSON: policyText("2"), expectedVersion: "1", at: 20, byUID: 0)

        #expect(try store.currentBundle() == second)
        #expect(try store.history() == [second, first])
        #expect(second.sha256 == SHA256.hexDigest(of: policyText("2")))
        #expect(second.kind == .apply && second.appliedAt == 20 && second.appliedByUID == 0)
        #expect(first.appliedByUID == 1000)
        #expect(second.id > first.id)
    }

    @Test func expectedVersionMismatchIsAConflictAndWritesNothing() throws {
        let store = try directory.openStore()

        #expect(throws: StoreError.versionConflict(expected: "0", current: nil)) { try store.applyForTest("1", expected: "0") }
        try store.applyForTest("1")
        #expect(throws: StoreError.versionConflict(expected: "0", current: "1")) { try store.applyForTest("2", expected: "0") }
        #expect(try store.history().map(\.version) == ["1"])
        try store.applyForTest("2", expected: "1")
        #expect(try store.currentBundle()?.version == "2")
        // By bytes, as the history finds versions: "cafe\u{301}" is not "caf\u{E9}" (String's == says it is).
        try store.applyForTest("caf\u{E9}")
        #expect(throws: StoreError.self) { try store.applyForTest("3", expected: "cafe\u{301}") }
        #expect(try store.currentBundle()?.version.utf8.elementsEqual("caf\u{E9}".utf8) == true)
    }

    @Test func historyKeepsOnlyTheConfiguredNumberOfEntries() throws {
        var configuration = StateStore.Configuration()
        configuration.historyLimit = 3
        let store = try directory.openStore(configuration: configuration)
        for version in 1...7 { try store.applyForTest("\(version)") }
        #expect(try store.history().map(\.version) == ["7", "6", "5"])
        #expect(throws: StoreError.unknownVersion("4")) { try store.rollback(to: "4", at: 1, byUID: 0) }
    }

    @Test func defaultHistoryLimitIsTwenty() throws {
        let store = try directory.openStore()
        for version in 1...25 { try store.applyForTest("\(version)") }
        let history = try store.history()
        #expect(history.count == 20)
        #expect(history.first?.version == "25" && history.last?.version == "6")
    }

    @Test func rollbackAddsAnEntryThatRestoresTheEarlierText() throws {
        let store = try directory.openStore()
        let original = try store.applyForTest("1")
        try store.applyForTest("2")

        let rolledBack = try store.rollback(to: "1", at: 99, byUID: 42)
        #expect(rolledBack.kind == .rollback)
        #expect(rolledBack.canonicalJSON == original.canonicalJSON && rolledBack.sha256 == original.sha256)
        #expect(rolledBack.appliedByUID == 42 && rolledBack.appliedAt == 99)
        #expect(try store.currentBundle() == rolledBack)
        #expect(try store.history().map(\.version) == ["1", "2", "1"])
        // Compare-and-swap sees the rolled-back version as current.
        try store.applyForTest("3", expected: "1")
        #expect(throws: StoreError.unknownVersion("9")) { try store.rollback(to: "9", at: 1, byUID: 0) }
    }

    @Test func everythingSurvivesCloseAndReopen() throws {
        let store = try directory.openStore()
        try store.applyForTest("1")
        try store.applyForTest("2")
        try store.rollback(to: "1", at: 5, byUID: 7)
        let wipe = try store.issueWipe(appID: "com.example.notes", issuedAt: 6, byUID: 0)
        try store.recordFeedback(appID: "com.example.notes", key: "sync", severity: .info, message: "ok", data: nil, at: 8)
        let history = try store.history()
        store.close()

        let reopened = try directory.openStore()
        #expect(reopened.recoveredCorruption == nil)
        #expect(try reopened.history() == history)
        #expect(try reopened.currentBundle()?.kind == .rollback)
        #expect(try reopened.pendingWipes(appID: "com.example.notes") == [wipe])
        #expect(try reopened.app(appID: "com.example.notes")?.feedback.map(\.key) == ["sync"])
        // Ids keep increasing after a reopen (AUTOINCREMENT never reuses them).
        #expect(try reopened.applyForTest("3").id > history[0].id)
    }

    @Test func invalidBundleFieldsAreRejectedByName() throws {
        let store = try directory.openStore()
        #expect(throws: StoreError.invalidField(field: "version", reason: "must not be empty")) {
            try store.apply(version: "", canonicalJSON: "{}", expectedVersion: nil, at: 1, byUID: 0)
        }
        #expect(throws: StoreError.invalidField(field: "policy", reason: "must not be empty")) {
            try store.apply(version: "1", canonicalJSON: "", expectedVersion: nil, at: 1, byUID: 0)
        }
        #expect(throws: StoreError.invalidField(field: "version", reason: "must be at most 128 characters, got 129")) {
            try store.apply(version: String(repeating: "v", count: 129), canonicalJSON: "{}", expectedVersion: nil, at: 1, byUID: 0)
        }
        #expect(try store.currentBundle() == nil)
        // The store takes what the policy language allows: the longest version, the largest bundle.
        let largest = "\"" + String(repeating: "x", count: PolicyLimits.maxDocumentBytes - 2) + "\""
        #expect(try store.apply(version: String(repeating: "v", count: 128), canonicalJSON: largest, expectedVersion: nil,
                                at: 2, byUID: 0).canonicalJSON.utf8.count == PolicyLimits.maxDocumentBytes)
        #expect(throws: StoreError.invalidField(field: "policy", reason: "must be at most 16777216 bytes of canonical JSON")) {
            try store.apply(version: "1", canonicalJSON: largest + " ", expectedVersion: nil, at: 3, byUID: 0)
        }
    }

    @Test func textWithEmbeddedNulAndNonASCIIRoundTrips() throws {
        let store = try directory.openStore()
        let text = "{\"note\":\"naïve \u{0}\u{1F600}\"}"
        try store.apply(version: "ü", canonicalJSON: text, expectedVersion: nil, at: 1, byUID: 0)
        #expect(try store.currentBundle()?.canonicalJSON == text)
        #expect(try store.rollback(to: "ü", at: 2, byUID: 0).version == "ü")
    }
}

@Suite struct SignedSerialTests {
    let directory: StoreDirectory
    init() throws { directory = try StoreDirectory() }

    @Test func aSignedApplyRecordsItsSerialAndRefusesAReplayWithoutWriting() throws {
        let store = try directory.openStore()
        #expect(try store.lastAppliedSerial() == nil)
        try store.apply(version: "1", canonicalJSON: policyText("1"), expectedVersion: nil, at: 10, byUID: 0,
                        signed: (serial: 7, keyID: "k1"))
        #expect(try store.lastAppliedSerial().map { [$0.serial, $0.appliedAt] } == [7, 10])
        for serial: Int64 in [7, 6] {
            #expect(throws: StoreError.serialNotNewer(serial: serial, lastApplied: 7)) {
                try store.apply(version: "old", canonicalJSON: policyText("old"), expectedVersion: nil, at: 20, byUID: 0,
                                signed: (serial: serial, keyID: "k1"))
            }
        }
        #expect(try store.history().map(\.version) == ["1"])
        // Unsigned applies and rollbacks leave the high-water mark where it is.
        try store.applyForTest("2")
        try store.rollback(to: "1", at: 30, byUID: 0)
        #expect(try store.lastAppliedSerial()?.serial == 7)
        try store.apply(version: "3", canonicalJSON: policyText("3"), expectedVersion: nil, at: 40, byUID: 0,
                        signed: (serial: 8, keyID: "k2"))
        store.close()
        let reopened = try directory.openStore()
        #expect(try reopened.lastAppliedSerial().map { "\($0.serial) \($0.keyID)" } == "8 k2")
    }
}
