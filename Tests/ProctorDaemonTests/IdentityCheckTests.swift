import LinuxIO
import ProctorPolicy
@testable import ProctorDaemon
import Testing

@Suite struct IdentityCheckTests {
    private static let notesFile = FileIdentity(device: 2049, inode: 100)
    private static let otherFile = FileIdentity(device: 2049, inode: 200)
    private let notes = PeerIdentity(pid: 4242, uid: 1000, gid: 1000, executable: "/usr/bin/example-notes",
                                     executableFile: notesFile, startTime: 77, userName: "alice", groups: [1000, 27])

    /// The file at every path is `notesFile`; nothing is pinned.
    private func verify(_ peer: PeerIdentity, _ match: MatchRule?, onDisk: Result<FileIdentity, Errno> = .success(notesFile),
                        pinned: FileIdentity? = nil) -> IdentityCheck.Verdict {
        IdentityCheck.verify(peer, against: match, appID: "com.example.notes") { _ in
            IdentityCheck.ExecutableEvidence(onDisk: onDisk, pinned: pinned)
        }
    }

    @Test func aMatchingExecutableAndUserIsAcceptedAndPinned() {
        let pinned = IdentityCheck.Verdict.acceptedByFile(executable: "/usr/bin/example-notes", file: Self.notesFile)
        #expect(verify(notes, MatchRule(executable: "/usr/bin/example-notes", users: ["bob", "alice"])) == pinned)
        #expect(verify(notes, MatchRule(executable: "/usr/bin/example-notes", users: ["*"])) == pinned)
        #expect(verify(notes, MatchRule(executable: "/usr/bin/example-notes")) == pinned)
        // Pinned already: nothing more to remember.
        #expect(verify(notes, MatchRule(executable: "/usr/bin/example-notes"), pinned: Self.notesFile) == .accepted)
    }

    @Test func withoutAMatchBlockNobodyMayClaimTheApp() {
        #expect(verify(notes, nil) == .mismatch("policy for com.example.notes has no match block, so no process may register as it"))
    }

    @Test func anotherFileIsRefusedWhateverItsPathSays() {
        // What a bind mount in another mount namespace does: the trusted path, another file.
        #expect(verify(notes, MatchRule(executable: "/usr/bin/example-notes"), onDisk: .success(Self.otherFile))
            == .mismatch("pid 4242 runs /usr/bin/example-notes (dev 2049 inode 100), "
                + "not the file at /usr/bin/example-notes (dev 2049 inode 200)"))
        #expect(verify(notes, MatchRule(executable: "/usr/bin/example-notes"), onDisk: .failure(.noSuchFileOrDirectory))
            == .mismatch("/usr/bin/example-notes cannot be examined: \(Errno.noSuchFileOrDirectory)"))
    }

    @Test func aPinnedProcessKeepsItsIdentityOnlyWhileItRunsThePinnedFile() {
        // The file was replaced (an upgrade): the process still runs the old one it was verified with.
        #expect(verify(notes, MatchRule(executable: "/usr/bin/example-notes"), onDisk: .success(Self.otherFile),
                       pinned: Self.notesFile) == .accepted)
        #expect(verify(notes, MatchRule(executable: "/usr/bin/example-notes"), onDisk: .failure(.noSuchFileOrDirectory),
                       pinned: Self.notesFile) == .accepted)
        // It exec'd something else since: the pin is for another file.
        var execd = notes
        execd.executableFile = FileIdentity(device: 2049, inode: 300)
        #expect(!verify(execd, MatchRule(executable: "/usr/bin/example-notes"), onDisk: .success(Self.otherFile),
                        pinned: Self.notesFile).isAccepted)
        // The pin does not lift the user rule.
        #expect(verify(notes, MatchRule(executable: "/usr/bin/example-notes", users: ["root"]), onDisk: .success(Self.otherFile),
                       pinned: Self.notesFile) == .mismatch("user alice is not one of root"))
    }

    @Test func anUnreadableExecutableIsRefused() {
        var peer = notes
        peer.executableFile = nil
        #expect(verify(peer, MatchRule(executable: "/usr/bin/example-notes"))
            == .mismatch("the executable of pid 4242 could not be read"))
        // Without an executable rule the executable does not matter.
        #expect(verify(peer, MatchRule(users: ["alice"])) == .accepted)
    }

    @Test func usersAreMatchedByNameElseByUID() {
        #expect(verify(notes, MatchRule(users: ["root"])) == .mismatch("user alice is not one of root"))
        #expect(!verify(notes, MatchRule(users: [])).isAccepted)
        var nameless = notes
        nameless.userName = nil
        #expect(verify(nameless, MatchRule(users: ["1000"])) == .accepted)
        #expect(verify(nameless, MatchRule(users: ["alice"])) == .mismatch("user 1000 is not one of alice"))
    }

    /// A user is named by the bytes of the name: U+212A KELVIN SIGN is canonically equivalent to
    /// "K", so `String`'s `==` found the account "\u{212A}ate" to be the policy's user "Kate".
    @Test func aUserNameInAnotherUnicodeFormIsAnotherUser() {
        var kelvin = notes
        kelvin.userName = "\u{212A}ate"
        #expect(verify(kelvin, MatchRule(users: ["Kate"])) == .mismatch("user \u{212A}ate is not one of Kate"))
        kelvin.userName = "Kate"
        #expect(verify(kelvin, MatchRule(users: ["Kate"])) == .accepted)
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
