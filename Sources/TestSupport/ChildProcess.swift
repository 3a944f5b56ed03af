public import Foundation
import Glibc

/// A child process under test: its standard output and error are captured as they arrive,
/// it can be sent signals, and every wait has a bound, so a misbehaving child fails the test
/// instead of hanging it. The child is killed when the value is deinitialised while running.
public final class ChildProcess: Sendable {
    private let process: Process
    private let capture = Capture()

    /// Starts `executable` with `arguments`; `environment` entries are added to (or, with a
    /// nil value, removed from) the test's own environment.
    public init(_ executable: URL, arguments: [String] = [], environment: [String: String?] = [:]) throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment
        for (name, value) in environment { merged[name] = value }
        process.environment = merged
        // Channels made close-on-exec atomically (socketpair with SOCK_CLOEXEC; Glibc does not
        // offer pipe2): Foundation's Pipe() is inheritable, so a child that another test
        // spawns at the same moment would hold this child's output open and hide its
        // end-of-file until that other child exits.
        let output = try Self.closeOnExecChannel()
        let error = try Self.closeOnExecChannel()
        defer {
            try? output.write.close()
            try? error.write.close()
        }
        process.standardOutput = output.write
        process.standardError = error.write
        process.standardInput = FileHandle.nullDevice
        let capture = self.capture
        process.terminationHandler = { _ in capture.update { $0.exited = true } }
        try process.run()
        capture.read(output.read, isStandardError: false)
        capture.read(error.read, isStandardError: true)
        self.process = process
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// The child's process id.
    public var pid: pid_t { process.processIdentifier }

    /// Standard output so far, as text.
    public var output: String { capture.update { String(decoding: $0.standardOutput, as: UTF8.self) } }
    /// Standard error so far, as text.
    public var errorOutput: String { capture.update { String(decoding: $0.standardError, as: UTF8.self) } }
    /// The complete lines of standard output so far.
    public var outputLines: [String] { capture.update { $0.outputLines } }

    /// Sends `signal` to the child.
    public func send(_ signal: Int32) throws {
        guard kill(pid, signal) == 0 else {
            throw TestSupportError("kill(\(pid), \(signal)) failed: \(String(cString: strerror(errno)))")
        }
    }

    /// Waits until standard output has `count` complete lines; returns them all.
    @discardableResult
    public func waitForOutputLines(count: Int, timeout: Duration = .seconds(10)) throws -> [String] {
        try capture.wait(timeout: timeout, for: "\(count) lines of output") { state in
            let lines = state.outputLines
            return lines.count >= count ? lines : nil
        }
    }

    /// Waits until some complete line of standard output equals `line`; returns all lines.
    @discardableResult
    public func waitForOutputLine(_ line: String, timeout: Duration = .seconds(10)) throws -> [String] {
        try capture.wait(timeout: timeout, for: "the output line '\(line)'") { state in
            let lines = state.outputLines
            return lines.contains(line) ? lines : nil
        }
    }

    /// Waits for the child to exit and for its output to be fully read; returns the exit
    /// status, or 128 + the signal number when a signal ended it (as shells report it).
    @discardableResult
    public func waitForExit(timeout: Duration = .seconds(10)) throws -> Int32 {
        try capture.wait(timeout: timeout, for: "the child to exit") { state in
            state.exited && state.outputClosed && state.errorClosed ? () : nil
        }
        return process.terminationReason == .uncaughtSignal
            ? 128 + process.terminationStatus : process.terminationStatus
    }

    /// Stops the child as `systemctl stop` does (SIGTERM) and returns its exit status, as
    /// `waitForExit` reports it.
    @discardableResult
    public func terminate(timeout: Duration = .seconds(10)) throws -> Int32 {
        try send(SIGTERM)
        return try waitForExit(timeout: timeout)
    }

    /// The state letter of `/proc/PID/stat` (`R`, `S`, `T` for stopped, `Z`, …).
    public func schedulerState() throws -> Character {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // The command name in parentheses may contain spaces; the state follows the last ')'.
        guard let close = stat.lastIndex(of: ")"),
              let state = stat[stat.index(after: close)...].first(where: { $0 != " " }) else {
            throw TestSupportError("unexpected /proc/\(pid)/stat: \(stat)")
        }
        return state
    }

    /// Waits until `schedulerState()` is `state`.
    public func waitForSchedulerState(_ state: Character, timeout: Duration = .seconds(10)) throws {
        let deadline = ContinuousClock.now + timeout
        while try schedulerState() != state {
            guard ContinuousClock.now < deadline else {
                throw TestSupportError("timed out waiting for scheduler state \(state) of \(pid)")
            }
            usleep(2_000) // the kernel offers no notification of a state change to a non-parent
        }
    }

    private static func closeOnExecChannel() throws -> (read: Int32, write: FileHandle) {
        var descriptors: [Int32] = [0, 0]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &descriptors) == 0 else {
            throw TestSupportError("socketpair failed: \(String(cString: strerror(errno)))")
        }
        return (descriptors[0], FileHandle(fileDescriptor: descriptors[1], closeOnDealloc: true))
    }
}

/// What has been seen of a child, shared by the reader threads, the termination handler and
/// the waiting test; a separate object so that none of them keeps the `ChildProcess` alive.
private final class Capture: @unchecked Sendable {
    // @unchecked: every access to `state` holds `condition`.
    struct State {
        var standardOutput = Data()
        var standardError = Data()
        var outputClosed = false
        var errorClosed = false
        var exited = false

        var outputLines: [String] {
            var lines = String(decoding: standardOutput, as: UTF8.self)
                .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            lines.removeLast() // the part after the last newline is not a complete line
            return lines
        }
    }

    private let condition = NSCondition()
    private var state = State()

    /// Runs `body` on the state under the lock and wakes every waiter.
    func update<Result>(_ body: (inout State) -> Result) -> Result {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        return body(&state)
    }

    /// Reads `descriptor` to its end on a thread of its own, with blocking reads: the end of
    /// the output is then seen for certain, which FileHandle's readabilityHandler does not
    /// guarantee on Linux.
    func read(_ descriptor: Int32, isStandardError: Bool) {
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = Glibc.read(descriptor, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                update { state in
                    switch (count > 0, isStandardError) {
                    case (true, false): state.standardOutput.append(contentsOf: buffer[..<count])
                    case (true, true): state.standardError.append(contentsOf: buffer[..<count])
                    case (false, false): state.outputClosed = true
                    case (false, true): state.errorClosed = true
                    }
                }
                if count <= 0 { break }
            }
            close(descriptor)
        }
        thread.start()
    }

    /// Evaluates `check` whenever the state changes, until it returns a value or time is up.
    func wait<Result>(timeout: Duration, for what: String, _ check: (State) -> Result?) throws -> Result {
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let result = check(state) { return result }
            guard condition.wait(until: deadline) else {
                if let result = check(state) { return result }
                throw TestSupportError("""
                    timed out waiting for \(what) (exited: \(state.exited), stdout closed: \(state.outputClosed), \
                    stderr closed: \(state.errorClosed)); stdout so far: \
                    \(String(decoding: state.standardOutput, as: UTF8.self).debugDescription); \
                    stderr: \(String(decoding: state.standardError, as: UTF8.self).debugDescription)
                    """)
            }
        }
    }
}
