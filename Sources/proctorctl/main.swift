import Glibc
import LinuxIO
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

signal(SIGPIPE, SIG_IGN)
let console = Console(output: { writeAll($0, to: STDOUT_FILENO) }, error: { writeAll($0, to: STDERR_FILENO) })
exit(ProctorCTL.run(Array(CommandLine.arguments.dropFirst()), environment: processEnvironment(), console: console).rawValue)
