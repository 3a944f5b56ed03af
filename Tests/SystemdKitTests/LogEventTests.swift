import Testing
@testable import SystemdKit

@Suite struct LogEventTests {
    @Test func fieldNamesFollowJournalRules() {
        for valid in ["APP_ID", "PEER_PID", "A", "X9_", String(repeating: "A", count: 64)] {
            #expect(LogEvent.isValidFieldName(valid), "\(valid)")
        }
        for invalid in ["", "_PID", "app_id", "APP-ID", "9LIVES", "APP ID", "ÄPP", String(repeating: "A", count: 65)] {
            #expect(!LogEvent.isValidFieldName(invalid), "\(invalid)")
        }
    }

    @Test func theLoggersOwnFieldsAreReserved() {
        for reserved in LogEvent.reservedFieldNames {
            #expect(LogEvent.isReservedFieldName(reserved), "\(reserved)")
        }
        // Names of the same lengths as reserved ones, and prefixes of them.
        for other in ["SESSION", "DECISION", "PEER_PID", "MESSAGE_IX", "SYSLOG_IDENTIFIEX", "MESSAGES", "MESSAGE_", "PRIORIT"] {
            #expect(!LogEvent.isReservedFieldName(other), "\(other)")
        }
    }

    @Test func prioritiesCarrySyslogNumbersAndOrderBySeverity() {
        #expect(LogPriority.emergency.rawValue == 0)
        #expect(LogPriority.warning.rawValue == 4)
        #expect(LogPriority.debug.rawValue == 7)
        #expect(LogPriority.debug < .info)
        #expect(LogPriority.error > .warning)
        #expect(LogPriority.allCases.max() == .emergency)
    }

    /// The native protocol's bytes, as sd_journal_sendv sent them: `NAME=value\n`, and for a
    /// value with a newline `NAME\n`, its length (64-bit little-endian), the value and `\n`.
    @Test func journalRecordCarriesStandardFieldsThenEventFieldsInTheNativeProtocol() {
        let event = LogEvent(MessageID("0987ce39a1a04b68b12e42a0a603b261"), .warning, "Decision denied",
                             fields: [("APP_ID", "com.example.notes"), ("TARGET", "line one\nline two"), ("RULE", "")])
        let record = JournalRecord(event, syslogIdentifier: "proctord")
        let expected = Array("""
            MESSAGE=Decision denied
            MESSAGE_ID=0987ce39a1a04b68b12e42a0a603b261
            PRIORITY=4
            SYSLOG_IDENTIFIER=proctord
            APP_ID=com.example.notes
            TARGET

            """.utf8) + [17, 0, 0, 0, 0, 0, 0, 0] + Array("line one\nline two\nRULE=\n".utf8)
        #expect(record.bytes == expected)
    }

    @Test func journalRecordKeepsNonASCIIBytesAndCountsThemInTheLength() {
        let event = LogEvent(MessageID("0987ce39a1a04b68b12e42a0a603b261"), .info, "Zürich ✓\n")
        let record = JournalRecord(event, syslogIdentifier: "p")
        let message = Array("Zürich ✓\n".utf8)
        #expect(Array(record.bytes.prefix(8 + 8 + message.count + 1))
            == Array("MESSAGE\n".utf8) + [UInt8(message.count), 0, 0, 0, 0, 0, 0, 0] + message + [10])
    }

    @Test func stderrLineIsOneReadableLine() {
        let event = LogEvent(MessageID("0987ce39a1a04b68b12e42a0a603b261"), .error, "Reload failed\nbadly",
                             fields: [("APP_ID", "com.example.notes"), ("ERRORS", "apps.x: \"state\" unknown"), ("RULE", "")])
        #expect(StderrSink.line(for: event)
            == "err Reload failed\\nbadly APP_ID=com.example.notes ERRORS=\"apps.x: \\\"state\\\" unknown\" RULE=\"\"\n")
    }

    /// Escaping works on bytes: control characters (tab, CR, others as `\xNN`, DEL), quotes and
    /// backslashes in quoted values; non-ASCII characters pass unchanged.
    @Test func stderrLineEscapesEveryControlCharacter() {
        let event = LogEvent(MessageID("0987ce39a1a04b68b12e42a0a603b261"), .warning, "a\tb\rc\u{01}d\u{7f}e Zürich \\ \"",
                             fields: [("RULE", #"apps["com.x"].dlp.print"#), ("PATH", "/tmp/\u{1f}x\\y"), ("N", "Zürich")])
        #expect(StderrSink.line(for: event)
            == #"warning a\tb\rc\x01d\x7fe Zürich \ " RULE="apps[\"com.x\"].dlp.print" PATH="/tmp/\x1fx\\y" N=Zürich"# + "\n")
    }
}
