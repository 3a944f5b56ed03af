/// One structured log message: a fixed kind (`messageID`), a severity, a human sentence and
/// journal fields such as `APP_ID=` or `RULE=`.
public struct LogEvent: Sendable {
    public let messageID: MessageID
    public let priority: LogPriority
    public let message: String
    /// Extra fields in the order given; names are journal field names (see `isValidFieldName`).
    public let fields: [(String, String)]

    /// The fields every record carries; an event may not set them itself.
    public static let reservedFieldNames = Set(reservedFieldNameList)
    /// The same names as a list: comparing four short strings is cheaper than hashing one.
    private static let reservedFieldNameList = ["MESSAGE", "MESSAGE_ID", "PRIORITY", "SYSLOG_IDENTIFIER"]

    /// Field names are constants in the caller's code, so an invalid or reserved one is a
    /// programmer error (precondition), not a runtime failure.
    /// The check runs for every event (a denial's has nine fields), so it reads the name's
    /// bytes in place and compares against the four reserved names: no array, no hashing.
    public init(_ messageID: MessageID, _ priority: LogPriority, _ message: String, fields: [(String, String)] = []) {
        for (name, _) in fields {
            precondition(Self.isValidFieldName(name), "invalid journal field name \(name)")
            precondition(!Self.reservedFieldNameList.contains(name), "journal field \(name) is set by the logger")
        }
        self.messageID = messageID
        self.priority = priority
        self.message = message
        self.fields = fields
    }

    /// Whether `name` may be a field the application sets: 1–64 characters of `A-Z`, `0-9`
    /// and `_`, not starting with `_` (reserved for journald's trusted fields) or a digit.
    public static func isValidFieldName(_ name: String) -> Bool {
        let bytes = name.utf8
        guard let first = bytes.first, bytes.count <= 64 else { return false }
        guard first != UInt8(ascii: "_"), !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
        return bytes.allSatisfy { byte in
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "_")
        }
    }

    /// The value of the first field called `name`, if any.
    public func field(_ name: String) -> String? {
        fields.first { $0.0 == name }?.1
    }
}
