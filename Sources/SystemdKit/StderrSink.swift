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
        String(decoding: lineBytes(for: event), as: UTF8.self)
    }

    /// `line(for:)` as UTF-8 bytes, built in one buffer: escaping works on bytes and copies
    /// the runs that need none whole (a rule such as `apps["x"].dlp.print` must be quoted and
    /// escaped on every denial, which scalar by scalar cost more than everything else here).
    static func lineBytes(for event: LogEvent) -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(256)
        line.append(contentsOf: event.priority.description.utf8)
        line.append(UInt8(ascii: " "))
        appendEscaped(event.message, quotes: false, to: &line)
        for (name, value) in event.fields {
            line.append(UInt8(ascii: " "))
            line.append(contentsOf: name.utf8)
            line.append(UInt8(ascii: "="))
            appendQuotedIfNeeded(value, to: &line)
        }
        line.append(UInt8(ascii: "\n"))
        return line
    }

    public func write(_ event: LogEvent) throws(LogSinkError) {
        do {
            try FileDescriptor(rawValue: descriptor).writeAll(Self.lineBytes(for: event))
        } catch {
            throw .stream(descriptor: descriptor, error)
        }
    }

    private static func appendQuotedIfNeeded(_ value: String, to line: inout [UInt8]) {
        let needsQuotes = value.isEmpty || value.utf8.contains { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\"")
            || $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: "\\") }
        if needsQuotes { line.append(UInt8(ascii: "\"")) }
        appendEscaped(value, quotes: needsQuotes, to: &line)
        if needsQuotes { line.append(UInt8(ascii: "\"")) }
    }

    /// Control characters as `\n`, `\t`, `\r` or `\xNN`, and with `quotes` also `\\` and `\"`;
    /// every other byte (UTF-8 of non-ASCII characters included) as it is.
    private static func appendEscaped(_ text: String, quotes: Bool, to line: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes in
            var unwritten = 0
            for index in bytes.indices {
                let byte = bytes[index]
                guard byte < 0x20 || byte == 0x7f || (quotes && (byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\""))) else {
                    continue
                }
                line.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[unwritten..<index]))
                unwritten = index + 1
                line.append(UInt8(ascii: "\\"))
                switch byte {
                case 0x0A: line.append(UInt8(ascii: "n"))
                case 0x09: line.append(UInt8(ascii: "t"))
                case 0x0D: line.append(UInt8(ascii: "r"))
                case UInt8(ascii: "\\"), UInt8(ascii: "\""): line.append(byte)
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    line.append(contentsOf: [UInt8(ascii: "x"), hex[Int(byte >> 4)], hex[Int(byte & 0xf)]])
                }
            }
            line.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[unwritten...]))
        }
    }
}
