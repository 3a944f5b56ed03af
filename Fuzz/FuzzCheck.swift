// Compiled into every fuzz target: property checks that say what broke. `precondition`
// drops its message in optimised builds, and a crash report without it is a riddle.
import Glibc

/// Stops the fuzzer with `message` on standard error when `condition` is false.
func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    guard !condition() else { return }
    fail(message())
}

/// Stops the fuzzer with `message` on standard error.
func fail(_ message: String) -> Never {
    let line = Array("fuzz property broken: \(message)\n".utf8)
    _ = write(2, line, line.count)
    abort()
}
