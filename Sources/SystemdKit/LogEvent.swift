import Glibc

/// One structured log message: a fixed kind (`messageID`), a severity, a human sentence and
/// journal fields such as `APP_ID=` or `RULE=`.
public struct LogEvent: Sendable {
    public let messageID: MessageID
    public let priority: LogPriority
    public let message: String
    /// Extra fields in the order given; names are journal field names (see `isValidFieldName`).
    public let fields: [(String, String)]

    /// The fields every record carries; an event may not set them itself.
    public static let reservedFieldNames: Set<String> = ["MESSAGE", "MESSAGE_ID", "PRIORITY", "SYSLOG_IDENTIFIER"]

    /// Field names are constants in the caller's code, so an invalid or reserved one is a
    /// programmer error (precondition), not a runtime failure.
    /// The check runs for every event (a denial's has ten fields), so it reads each name's
    /// bytes once, in place, and compares them with a reserved name only of the same length:
    /// no array, no hashing, no `String` comparison.
    public init(_ messageID: MessageID, _ priority: LogPriority, _ message: String, fields: [(String, String)] = []) {
        for (name, _) in fields {
            var bytes = name
            let (valid, reserved) = bytes.withUTF8 { (Self.isValidFieldName($0), Self.isReservedFieldName($0)) }
            precondition(valid, "invalid journal field name \(name)")
            precondition(!reserved, "journal field \(name) is set by the logger")
        }
        self.messageID = messageID
        self.priority = priority
        self.message = message
        self.fields = fields
    }

    /// Whether `name` may be a field the application sets: 1–64 characters of `A-Z`, `0-9`
    /// and `_`, not starting with `_` (reserved for journald's trusted fields) or a digit.
    public static func isValidFieldName(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { isValidFieldName($0) }
    }

    private static func isValidFieldName(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = bytes.first, bytes.count <= 64 else { return false }
        guard first != UInt8(ascii: "_"), !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
        for byte in bytes {
            guard (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "_") else { return false }
        }
        return true
    }

    /// Whether `name` is one of `reservedFieldNames`, as `init` checks it.
    static func isReservedFieldName(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { isReservedFieldName($0) }
    }

    /// Whether `bytes` are one of `reservedFieldNames`.
    private static func isReservedFieldName(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let reserved: StaticString
        switch bytes.count {
        case 7: reserved = "MESSAGE"
        case 8: reserved = "PRIORITY"
        case 10: reserved = "MESSAGE_ID"
        case 17: reserved = "SYSLOG_IDENTIFIER"
        default: return false
        }
        return memcmp(bytes.baseAddress!, reserved.utf8Start, bytes.count) == 0
    }

    /// The value of the first field called `name`, if any.
    public func field(_ name: String) -> String? {
        fields.first { $0.0 == name }?.1
    }
}
