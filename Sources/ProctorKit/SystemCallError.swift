import Glibc

/// A failed system or libsystemd call: which call, on what, and the errno it reported.
struct SystemCallError: Error, CustomStringConvertible, Equatable {
    let call: String
    let errno: Int32

    var description: String { "\(call): \(String(cString: strerror(errno)))" }

    /// The current `errno` of a libc call that returned -1.
    static func last(_ call: String) -> SystemCallError {
        SystemCallError(call: call, errno: Glibc.errno)
    }
}
