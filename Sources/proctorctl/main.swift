import Glibc
import ProctorCTL

/// Writes all of `text` to `descriptor`, retrying short writes and EINTR; a closed pipe
/// ends the output quietly.
@Sendable func writeAll(_ text: String, to descriptor: Int32) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        if written < 0 {
            if errno == EINTR { continue }
            return
        }
        bytes = bytes.dropFirst(written)
    }
}

/// The process environment as a dictionary (the first of duplicate names wins, as getenv does).
/// Each entry is split at its first "=" byte: "=" before a combining mark is one `Character`,
/// which is not "=".
func environment() -> [String: String] {
    var variables: [String: String] = [:]
    var entry = environ
    while let pointer = entry.pointee {
        let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: strlen(pointer))
        if let equals = bytes.firstIndex(of: UInt8(ascii: "=")) {
            let name = String(decoding: bytes[..<equals], as: UTF8.self)
            if variables[name] == nil { variables[name] = String(decoding: bytes[(equals + 1)...], as: UTF8.self) }
        }
        entry += 1
    }
    return variables
}

signal(SIGPIPE, SIG_IGN)
let console = Console(output: { writeAll($0, to: STDOUT_FILENO) }, error: { writeAll($0, to: STDERR_FILENO) })
exit(ProctorCTL.run(Array(CommandLine.arguments.dropFirst()), environment: environment(), console: console).rawValue)
