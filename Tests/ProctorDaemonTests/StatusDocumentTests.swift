import JSONCore
@testable import ProctorDaemon
import ProctorProtocol
import ProctorStore
import Testing
import TestSupport

/// Which apps a status document lists under `StatusMaxApps=` (`StatusDocumentBuilder.listed`),
/// from a real store; the whole document through proctord is in Tests/python/test_fleet.py.
@Suite struct StatusDocumentTests {
    @Test func theMostRecentlyRegisteredAreListedSortedThenTheRestById() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try StateStore.open(directory: directory.path)
        defer { store.close() }
        for (appID, at) in [("com.a", 10), ("com.b", 30), ("com.c", 20)] {
            try store.recordRegistration(appID: appID, at: Int64(at), appVersion: nil, pid: 1, uid: 0)
        }
        let known = ["com.e", "com.c", "com.a", "com.d", "com.b"]
        func listed(_ limit: Int) -> [String] {
            StatusDocumentBuilder.listed(known, atMost: limit, memory: [:], store: store)
        }
        #expect(listed(5) == known.sorted())
        #expect(listed(9) == known.sorted())
        #expect(listed(0) == [])
        #expect(listed(1) == ["com.b"])
        #expect(listed(2) == ["com.b", "com.c"])
        #expect(listed(4) == ["com.a", "com.b", "com.c", "com.d"])  // never registered: by id
        // Without a store every app ranks alike: by id.
        #expect(StatusDocumentBuilder.listed(known, atMost: 2, memory: [:], store: nil) == ["com.a", "com.b"])
    }

    /// While the builder's read-only connection cannot open (here: no database yet), a document
    /// lists no apps, counts them all in `appsLeftOut` and says why, and the builder hands the
    /// error back for the loop to log; once the database is there, the next document lists them.
    @Test func aDocumentWithoutTheStoreSaysWhyItListsNoApps() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let active = try AgentRegistryTests.policy(version: "1", apps: AgentRegistryTests.notesAndMail)
        let counts = Admin.Counts(appsKnown: 0, appsConnected: 0, sessions: 0, decisionsAllowed: 0, decisionsDenied: 0,
                                  decisions: [], registrationsRefused: [], logMessagesDropped: 0, logSinkFailures: 0,
                                  storageFailures: 0, eventsDropped: 0)
        let snapshot = StatusSnapshot(machineID: "m", sentAt: "2026-12-01T00:00:00.000Z",
                                      status: Admin.Status.Reply(version: "test", startedAt: "2026-12-01T00:00:00.000Z",
                                                                 uptimeSeconds: 1, policy: active.info, lastReload: nil,
                                                                 counts: counts, fleet: nil),
                                      active: active, memory: [:], maxApps: 10)
        let builder = StatusDocumentBuilder(databasePath: directory.path + "/" + StateStore.databaseFileName)

        let unread = builder.build(snapshot)
        let document = try #require(try JSONParser.parse(unread.bytes).objectValue)
        #expect(document["apps"] == .array([]))
        #expect(document["appsLeftOut"] == .number(2))
        let reason = try #require(document["appsLeftOutReason"]?.stringValue)
        #expect(reason.hasPrefix("the state database cannot be read: cannot open the state database \(directory.path)"))
        #expect(unread.storeUnreadable != nil)

        try StateStore.open(directory: directory.path).close()
        let read = builder.build(snapshot)
        let complete = try #require(try JSONParser.parse(read.bytes).objectValue)
        #expect(complete["apps"]?.arrayValue?.count == 2 && complete["appsLeftOut"] == .number(0))
        #expect(complete["appsLeftOutReason"] == nil && read.storeUnreadable == nil)
    }
}
