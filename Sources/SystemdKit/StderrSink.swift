import Glibc
import LinuxIO

/// Writes each event as one readable line to a stream (standard error by default):
/// `warning Decision denied APP_ID=com.example.notes RULE="dlp.clipboard"`.
/// Values with spaces, quotes or `=` are quoted; control characters are escaped, so an
/// event is always exactly one line.
public struct StderrSink: LogSink {
    /// The descriptor written to (2, standard error, by default); the sink does not own or close it.
    public let descriptor: CInt

    public init(descriptor: CInt = 2) {
        self.descriptor = descriptor
    }

    /// The line written for `event`, newline included.
    public static func line(for event: LogEvent) -> String {
        var line = event.priority.description + " " + escaped(event.message)
        for (name, value) in event.fields {
            line += " " + name + "=" + quotedIfNeeded(value)
        }
        return line + "\n"
    }

    public func write(_ event: LogEvent) throws(LogSinkError) {
        do {
            try FileDescriptor(rawValue: descriptor).writeAll(Self.line(for: event).utf8)
        } catch {
            throw .stream(descriptor: descriptor, error)
        }
    }

    private static func quotedIfNeeded(_ value: String) -> String {
        let needsQuotes = value.isEmpty || value.utf8.contains { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\"")
            || $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: "\\") }
        let text = escaped(value, quotes: needsQuotes)
        return needsQuotes ? "\"" + text + "\"" : text
    }

    private static func escaped(_ text: String, quotes: Bool = false) -> String {
        // Most text needs nothing escaped: one pass over its bytes, and no copy.
        let isPlain = text.utf8.allSatisfy { byte in
            byte >= 0x20 && byte != 0x7f && !(quotes && (byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\"")))
        }
        if isPlain { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            case "\\" where quotes: result += "\\\\"
            case "\"" where quotes: result += "\\\""
            case _ where scalar.value < 0x20 || scalar.value == 0x7f:
                result += "\\x" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
