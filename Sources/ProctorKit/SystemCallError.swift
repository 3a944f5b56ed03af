import Glibc
import LinuxIO

/// A failed system or libsystemd call: which call, on what, and the `Errno` it reported.
struct SystemCallError: Error, CustomStringConvertible, Equatable {
    let call: String
    let errno: Errno

    init(call: String, errno: Errno) {
        self.call = call
        self.errno = errno
    }

    /// A libsystemd call that returned `-errno`.
    init(call: String, negativeErrno: Int32) {
        self.init(call: call, errno: Errno(rawValue: -negativeErrno))
    }

    var description: String { "\(call): \(errno)" }

    /// The current `errno` of a libc call that returned -1.
    static func last(_ call: String) -> SystemCallError {
        SystemCallError(call: call, errno: .current)
    }
}
