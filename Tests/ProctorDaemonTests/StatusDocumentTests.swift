@testable import ProctorDaemon
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
}
