import Glibc

/// Writes one line to standard output unbuffered, so a test reading the pipe sees each
/// event as it happens.
func logLine(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
}
