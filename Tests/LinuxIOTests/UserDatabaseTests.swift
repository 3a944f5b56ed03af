import Glibc
import LinuxIO
import Testing

/// The user and group databases through `getpwuid_r`/`getgrnam_r`, on this machine's own.
@Suite struct UserDatabaseTests {
    @Test func findsRootAndReportsNoEntryAsNil() throws {
        #expect(try UserDatabase.userName(forUID: 0) == "root")
        #expect(try UserDatabase.groupID(named: "root") == 0)
        // Not in any database: nil, not an error.
        #expect(try UserDatabase.userName(forUID: 3_999_999_999) == nil)
        #expect(try UserDatabase.groupID(named: "no-such-group-proctor") == nil)
    }

    @Test func agreesWithTheNonReentrantCalls() throws {
        let uid = getuid()
        #expect(try UserDatabase.userName(forUID: uid) == getpwuid(uid).map { String(cString: $0.pointee.pw_name) })
    }
}
