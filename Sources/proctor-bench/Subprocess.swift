import LinuxIO
import TestSupport
import Glibc

/// A child process started with `posix_spawn` (no fork of a multi-threaded Swift process).
struct Subprocess {
    let pid: pid_t
    /// Starts a child confined to a CPU (util-linux, on every Debian system).
    static let taskset = "/usr/bin/taskset"

    /// Starts `path` with `arguments` and `environment` (`NAME=value` strings); `redirect`
    /// maps a descriptor of ours onto one of the child's (for example a socket onto its
    /// standard input). Output the child writes goes to /dev/null unless redirected. With
    /// `cpu`, the child and every thread it starts are confined to that CPU.
    static func spawn(_ path: String, _ arguments: [String], environment: [String],
                      redirect: [(ours: CInt, theirs: CInt)] = [], cpu: Int? = nil) throws(BenchError) -> Subprocess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let redirected = Set(redirect.map(\.theirs))
        for standard: CInt in [0, 1, 2] where !redirected.contains(standard) {
            posix_spawn_file_actions_addopen(&actions, standard, "/dev/null", standard == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        for (ours, theirs) in redirect { posix_spawn_file_actions_adddup2(&actions, ours, theirs) }

        // taskset (util-linux) sets the CPU list and execs the child in the same process:
        // Glibc's Swift module has no sched_setaffinity (it needs _GNU_SOURCE).
        let command = cpu.map { [Self.taskset, "--cpu-list", String($0), path] } ?? [path]
        let argv = (command + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, command[0], &actions, nil, argv, envp)
        guard status == 0 else { throw BenchError("cannot start \(path): \(String(cString: strerror(status)))") }
        return Subprocess(pid: pid)
    }

    /// Sends SIGTERM, waits up to `seconds`, then SIGKILL; returns once the child is reaped.
    func stop(seconds: Double = 5) {
        kill(pid, SIGTERM)
        let deadline = MonotonicClock.nanoseconds() + UInt64(seconds * 1e9)
        var status: CInt = 0
        while waitpid(pid, &status, WNOHANG) == 0 {
            if MonotonicClock.nanoseconds() > deadline {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                return
            }
            usleep(2_000)
        }
    }

    /// Whether the child has exited (and reaps it if so).
    func hasExited() -> Bool {
        var status: CInt = 0
        return waitpid(pid, &status, WNOHANG) == pid
    }

    /// The child's resident memory in bytes: `field` (`VmRSS`, `RssAnon`, …) of /proc/PID/status.
    func residentBytes(field: String = "VmRSS") throws(BenchError) -> Int {
        let text = try readTextFile("/proc/\(pid)/status")
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
              let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) else {
            throw BenchError("no \(field) line in /proc/\(pid)/status")
        }
        return kib * 1024
    }
}

/// A benchmark that could not run or whose result is wrong; the run fails with this message.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The whole content of a (small) file as text.
func readTextFile(_ path: String) throws(BenchError) -> String {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw BenchError("cannot open \(path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        bytes += chunk[0..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Writes `bytes` to a new file at `path`.
func writeFile(_ path: String, _ bytes: [UInt8]) throws(BenchError) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw BenchError("cannot create \(path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { throw BenchError("cannot write \(path): \(String(cString: strerror(errno)))") }
        offset += written
    }
}

extension TemporaryDirectory {
    /// TestSupport's temporary directory, its failure as the benches' error.
    static func make(prefix: String) throws(BenchError) -> TemporaryDirectory {
        do { return try TemporaryDirectory(prefix: prefix) } catch { throw BenchError(error.description) }
    }
}
