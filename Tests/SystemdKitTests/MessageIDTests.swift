import Testing
@testable import SystemdKit

@Suite struct MessageIDTests {
    @Test func roundTripsLowercaseHex() throws {
        let id = try MessageID(parsing: "2B816DED08DC4DFAAEB7CF279A51E3EB")
        #expect(id.description == "2b816ded08dc4dfaaeb7cf279a51e3eb")
        #expect(id.high == 0x2b81_6ded_08dc_4dfa)
        #expect(id.low == 0xaeb7_cf27_9a51_e3eb)
        #expect(id == MessageID("2b816ded08dc4dfaaeb7cf279a51e3eb"))
    }

    @Test func keepsLeadingZeros() {
        #expect(MessageID("00000000000000010000000000000002").description == "00000000000000010000000000000002")
    }

    @Test func rejectsWrongLength() {
        #expect(throws: MessageID.ParseError.wrongLength(31)) { try MessageID(parsing: "2b816ded08dc4dfaaeb7cf279a51e3e") }
        #expect(throws: MessageID.ParseError.wrongLength(36)) {
            try MessageID(parsing: "2b816ded-08dc-4dfa-aeb7-cf279a51e3eb")
        }
    }

    @Test func rejectsNonHexDigits() {
        #expect(throws: MessageID.ParseError.notHexadecimal(position: 5)) {
            try MessageID(parsing: "2b816ged08dc4dfaaeb7cf279a51e3eb")
        }
    }
}
