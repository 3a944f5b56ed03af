import Glibc
import LinuxIO
import Testing
@testable import SystemdKit

/// JournalSink against a real datagram socket in journald's place.
@Suite struct JournalSinkTests {
    private let eventID = MessageID("0987ce39a1a04b68b12e42a0a603b261")

    @Test(arguments: [false, true]) func sendsTheRecordAsOneDatagram(abstract: Bool) throws {
        let journal = try DatagramReceiver(abstract: abstract)
        let sink = JournalSink(syslogIdentifier: "proctor-test", socketAddress: journal.address)
        let event = LogEvent(eventID, .notice, "two\nlines", fields: [("APP_ID", "com.example.notes")])
        try sink.write(event)
        let datagram = try #require(journal.receive())
        #expect(datagram.passedDescriptor == nil)
        #expect(datagram.bytes == JournalRecord(event, syslogIdentifier: "proctor-test").bytes)
    }

    /// A record larger than a datagram may be (root's 16 MiB send buffer, anyone else's less)
    /// arrives as a sealed memory file, passed with SCM_RIGHTS, holding the record's bytes.
    @Test func sendsALargeRecordAsASealedMemoryFile() throws {
        let journal = try DatagramReceiver()
        let sink = JournalSink(syslogIdentifier: "proctor-test", socketAddress: journal.address)
        let message = String(repeating: "0123456789abcdef", count: 17 << 16) + "\nend"  // 17 MiB and a newline
        let event = LogEvent(eventID, .info, message, fields: [("APP_ID", "com.example.notes")])
        let record = JournalRecord(event, syslogIdentifier: "proctor-test").bytes
        try sink.write(event)
        let datagram = try #require(journal.receive())
        #expect(datagram.bytes.isEmpty)
        let passed = try #require(datagram.passedDescriptor)
        let file = FileDescriptor(rawValue: passed)
        defer { try? file.close() }
        let getSeals: CInt = 1034  // F_GET_SEALS
        #expect(fcntl(passed, getSeals) == 0x0F, "sealed against every change (SEAL, SHRINK, GROW, WRITE)")
        #expect(lseek(passed, 0, SEEK_SET) == 0, "the descriptor shares the writer's offset, at the end")
        let received = try file.readAll(limit: 32 << 20)
        #expect(received == record, "\(received.count) bytes")
    }

    @Test func sealedMemoryFileRefusesWrites() throws {
        let file = try JournalSink.sealedMemoryFile(holding: Array("MESSAGE=x\n".utf8))
        defer { try? file.close() }
        #expect(throws: Errno.notPermitted) { try file.writeAll([1]) }
    }

    @Test func aStaleSocketIsRefusedNotSilent() throws {
        var address: String
        do {
            let journal = try DatagramReceiver()
            address = journal.address
            // Leave the file behind without anyone bound to it.
            _ = link(journal.address, journal.address + ".stale")
            address += ".stale"
        }
        defer { unlink(address) }
        let sink = JournalSink(syslogIdentifier: "proctor-test", socketAddress: address)
        #expect(throws: LogSinkError.journal(.connectionRefused)) { try sink.write(LogEvent(eventID, .info, "x")) }
    }

    @Test func anAddressThatIsNeitherPathNorAbstractIsRefused() {
        let sink = JournalSink(syslogIdentifier: "proctor-test", socketAddress: "run/journal")
        #expect(throws: LogSinkError.journal(Errno(rawValue: EAFNOSUPPORT))) { try sink.write(LogEvent(eventID, .info, "x")) }
    }
}
