import ProctorPolicy
@testable import ProctorDaemon
import Testing

@Suite struct IdentityCheckTests {
    private let notes = PeerIdentity(pid: 4242, uid: 1000, gid: 1000, executable: "/usr/bin/example-notes",
                                     userName: "alice", groups: [1000, 27])

    @Test func aMatchingExecutableAndUserIsAccepted() {
        let rule = MatchRule(executable: "/usr/bin/example-notes", users: ["bob", "alice"])
        #expect(IdentityCheck.verify(notes, against: rule, appID: "com.example.notes") == .accepted)
        #expect(IdentityCheck.verify(notes, against: MatchRule(executable: "/usr/bin/example-notes", users: ["*"]),
                                     appID: "com.example.notes") == .accepted)
        #expect(IdentityCheck.verify(notes, against: MatchRule(executable: "/usr/bin/example-notes"),
                                     appID: "com.example.notes") == .accepted)
    }

    @Test func withoutAMatchBlockNobodyMayClaimTheApp() {
        #expect(IdentityCheck.verify(notes, against: nil, appID: "com.example.notes")
            == .mismatch("policy for com.example.notes has no match block, so no process may register as it"))
    }

    @Test func anotherExecutableIsRefusedByName() {
        var peer = notes
        peer.executable = "/tmp/impostor"
        #expect(IdentityCheck.verify(peer, against: MatchRule(executable: "/usr/bin/example-notes"), appID: "a")
            == .mismatch("executable /tmp/impostor is not /usr/bin/example-notes"))
        // A longer name with the same prefix is another executable.
        peer.executable = "/usr/bin/example-notes-helper"
        #expect(IdentityCheck.verify(peer, against: MatchRule(executable: "/usr/bin/example-notes"), appID: "a") != .accepted)
    }

    @Test func anUnreadableExecutableIsRefused() {
        var peer = notes
        peer.executable = nil
        #expect(IdentityCheck.verify(peer, against: MatchRule(executable: "/usr/bin/example-notes"), appID: "a")
            == .mismatch("the executable of pid 4242 could not be read"))
        // Without an executable rule the executable does not matter.
        #expect(IdentityCheck.verify(peer, against: MatchRule(users: ["alice"]), appID: "a") == .accepted)
    }

    @Test func usersAreMatchedByNameElseByUID() {
        #expect(IdentityCheck.verify(notes, against: MatchRule(users: ["root"]), appID: "a")
            == .mismatch("user alice is not one of root"))
        #expect(IdentityCheck.verify(notes, against: MatchRule(users: []), appID: "a") != .accepted)
        var nameless = notes
        nameless.userName = nil
        #expect(IdentityCheck.verify(nameless, against: MatchRule(users: ["1000"]), appID: "a") == .accepted)
        #expect(IdentityCheck.verify(nameless, against: MatchRule(users: ["alice"]), appID: "a")
            == .mismatch("user 1000 is not one of alice"))
    }

    @Test func rootAndTheAdminGroupMayAdminister() {
        var root = notes
        root.uid = 0
        #expect(IdentityCheck.mayAdminister(root, adminGroupID: nil))
        #expect(!IdentityCheck.mayAdminister(notes, adminGroupID: nil))
        #expect(!IdentityCheck.mayAdminister(notes, adminGroupID: 999))
        #expect(IdentityCheck.mayAdminister(notes, adminGroupID: 27))    // supplementary
        #expect(IdentityCheck.mayAdminister(notes, adminGroupID: 1000))  // primary
        var primaryOnly = notes
        primaryOnly.groups = []
        #expect(IdentityCheck.mayAdminister(primaryOnly, adminGroupID: 1000))
    }
}
