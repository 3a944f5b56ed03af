import Testing
import TestSupport
@testable import ProctorStore

@Suite struct IdentityPinTests {
    let directory: StoreDirectory
    init() throws { directory = try StoreDirectory() }

    @Test func pinsSurviveARestartAndGoWhenRemoved() throws {
        let store = try directory.openStore()
        // Start times and inode numbers use all 64 bits.
        let notes = IdentityPin(bootID: "boot-1", pid: 4242, startTime: UInt64.max - 1, executable: "/usr/bin/notes",
                                device: 2049, inode: UInt64.max)
        var mail = notes
        mail.executable = "/usr/bin/mail"
        var later = notes
        later.startTime = 9
        try store.recordIdentityPin(notes, at: 1)
        try store.recordIdentityPin(notes, at: 2)  // again: no second row
        try store.recordIdentityPin(mail, at: 3)
        try store.recordIdentityPin(later, at: 4)
        store.close()

        let restarted = try directory.openStore()
        #expect(Set(try restarted.identityPins(bootID: "boot-1", pid: 4242, startTime: UInt64.max - 1)) == [notes, mail])
        #expect(try restarted.identityPins(bootID: "boot-2", pid: 4242, startTime: UInt64.max - 1).isEmpty)
        #expect(try restarted.identityPins().count == 3)
        try restarted.removeIdentityPins([notes])  // the process: both of its pins
        #expect(try restarted.identityPins() == [later])
    }
}
