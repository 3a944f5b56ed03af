import Glibc

/// Runs `body` in a forked child process and returns why it failed, or nil when it succeeded.
///
/// For tests of what changes a whole process irreversibly (Landlock, keyrings, resource limits):
/// the change stays in the child. The child is single-threaded, so `body` should do plain system
/// calls and not wait on anything another thread of the test process would have provided. The
/// child is killed if it has not finished within ten seconds.
public func failureInForkedChild(_ body: () throws -> Void) -> String? {
    var fds: [CInt] = [0, 0]
    guard pipe(&fds) == 0 else { return "pipe: \(String(cString: strerror(errno)))" }
    let child = fork()
    if child == 0 {
        close(fds[0])
        var message = ""
        do { try body() } catch { message = "\(error)" }
        _ = message.withCString { write(fds[1], $0, strlen($0)) }
        _exit(message.isEmpty ? 0 : 1)
    }
    close(fds[1])
    defer { close(fds[0]) }
    guard child > 0 else { return "fork: \(String(cString: strerror(errno)))" }
    var status: CInt = 0
    var waited: pid_t = 0
    for _ in 0..<10_000 where waited == 0 {
        waited = waitpid(child, &status, WNOHANG)
        if waited == 0 { usleep(1000) }
    }
    if waited == 0 {
        kill(child, SIGKILL)
        waitpid(child, &status, 0)
        return "the child did not finish within ten seconds"
    }
    var output: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while case let count = read(fds[0], &buffer, buffer.count), count > 0 { output += buffer[..<count] }
    let message = String(decoding: output, as: UTF8.self)
    if status == 0 && message.isEmpty { return nil }
    return message.isEmpty ? "the child ended with wait status \(status)" : message
}

/// Throws `what` unless `condition` holds: the expectation of code running in a forked child.
public func ensure(_ condition: Bool, _ what: @autoclosure () -> String) throws {
    if !condition { throw TestSupportError("not as expected: \(what())") }
}
