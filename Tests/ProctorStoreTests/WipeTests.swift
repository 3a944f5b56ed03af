import Testing
import TestSupport
@testable import ProctorStore

@Suite struct WipeTests {
    let directory: StoreDirectory
    init() throws { directory = try StoreDirectory() }

    @Test func aWipeGoesFromIssuedToDeliveredToCompletedAcrossARestart() throws {
        let store = try directory.openStore()
        let directive = try store.issueWipe(appID: "com.example.notes", issuedAt: 100, byUID: 0)
        #expect(directive.state == .issued && directive.issuedAt == 100 && directive.issuedByUID == 0)
        #expect(directive.id.count == 36 && directive.id.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12])
        #expect(try store.pendingWipes(appID: "com.example.notes") == [directive])
        #expect(try store.pendingWipes(appID: "com.example.other").isEmpty)
        store.close()

        // The daemon restarted while the app was away; the app registers now.
        let restarted = try directory.openStore()
        #expect(try restarted.pendingWipes(appID: "com.example.notes").map(\.id) == [directive.id])
        #expect(try restarted.markDelivered(id: directive.id, at: 200))
        #expect(try restarted.markDelivered(id: directive.id, at: 300))  // a second session: first time kept
        let delivered = try #require(try restarted.pendingWipes(appID: "com.example.notes").first)
        #expect(delivered.state == .delivered && delivered.deliveredAt == 200)

        #expect(try restarted.acknowledgeWipe(id: directive.id, appID: "com.example.notes", at: 400))
        #expect(try restarted.acknowledgeWipe(id: directive.id, appID: "com.example.notes", at: 500) == false)
        #expect(try restarted.pendingWipes(appID: "com.example.notes").isEmpty)
        #expect(try restarted.markDelivered(id: directive.id, at: 600) == false)
        let done = try restarted.wipes(appID: "com.example.notes")
        #expect(done.count == 1 && done[0].state == .completed && done[0].completedAt == 400 && done[0].deliveredAt == 200)
    }

    @Test func appsWithPendingWipesListsExactlyTheAppsWithAnUnacknowledgedDirective() throws {
        let store = try directory.openStore()
        #expect(try store.appsWithPendingWipes().isEmpty)
        let notes = try store.issueWipe(appID: "com.example.notes", issuedAt: 1, byUID: 0)
        let mail = try store.issueWipe(appID: "com.example.mail", issuedAt: 2, byUID: 0)
        _ = try store.issueWipe(appID: "com.example.mail", issuedAt: 3, byUID: 0)
        #expect(try store.markDelivered(id: mail.id, at: 4))
        #expect(try store.appsWithPendingWipes() == ["com.example.notes", "com.example.mail"])
        #expect(try store.acknowledgeWipe(id: notes.id, appID: "com.example.notes", at: 5))
        #expect(try store.appsWithPendingWipes() == ["com.example.mail"])
    }

    @Test func anAppCannotAcknowledgeAnUnknownOrAnotherAppsWipe() throws {
        let store = try directory.openStore()
        let directive = try store.issueWipe(appID: "com.example.notes", issuedAt: 1, byUID: 0)
        #expect(throws: StoreError.unknownWipe(id: directive.id, appID: "com.example.mail")) {
            try store.acknowledgeWipe(id: directive.id, appID: "com.example.mail", at: 2)
        }
        #expect(throws: StoreError.unknownWipe(id: "nope", appID: "com.example.notes")) {
            try store.acknowledgeWipe(id: "nope", appID: "com.example.notes", at: 2)
        }
        #expect(try store.pendingWipes(appID: "com.example.notes").map(\.state) == [.issued])
        #expect(try store.markDelivered(id: "nope", at: 2) == false)
    }

    @Test func acknowledgingAWipeThatWasNeverMarkedDeliveredRecordsDeliveryToo() throws {
        let store = try directory.openStore()
        let directive = try store.issueWipe(appID: "a", issuedAt: 1, byUID: 0)
        try store.acknowledgeWipe(id: directive.id, appID: "a", at: 5)
        #expect(try store.wipes(appID: "a").first?.deliveredAt == 5)
    }

    @Test func pendingWipesComeOldestFirstAndHistoryNewestFirstWithCompletedOnesTrimmed() throws {
        var configuration = StateStore.Configuration()
        configuration.completedWipesPerApp = 2
        let store = try directory.openStore(configuration: configuration)
        let directives = try (1...5).map { try store.issueWipe(appID: "a", issuedAt: Int64($0), byUID: 0) }
        #expect(Set(directives.map(\.id)).count == 5)
        #expect(try store.pendingWipes(appID: "a").map(\.issuedAt) == [1, 2, 3, 4, 5])
        for (index, directive) in directives.prefix(4).enumerated() {
            try store.acknowledgeWipe(id: directive.id, appID: "a", at: Int64(10 + index))
        }
        // Two newest completed kept; the pending one always kept.
        #expect(try store.wipes(appID: "a").map(\.issuedAt) == [5, 4, 3])
        #expect(try store.pendingWipes(appID: "a").map(\.issuedAt) == [5])
    }

    @Test func anInvalidAppIDIsRejectedByName() throws {
        let store = try directory.openStore()
        #expect(throws: StoreError.invalidField(field: "appId", reason: "must not be empty")) {
            try store.issueWipe(appID: "", issuedAt: 1, byUID: 0)
        }
    }
}
