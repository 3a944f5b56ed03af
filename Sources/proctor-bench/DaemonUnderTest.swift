import LinuxIO
import Glibc
import ProctorPolicy

/// A real proctord started by the bench on temporary directories, with its readiness
/// awaited on a notify socket the bench owns. Its log goes to /dev/null (it still formats
/// and writes every line, as in production).
final class DaemonUnderTest {
    let directory: TemporaryDirectory
    let process: Subprocess
    /// Nanoseconds from `posix_spawn` to `READY=1`.
    let startNanoseconds: UInt64

    var agentPath: String { directory.path + "/run/io.proctor.Agent" }
    var adminPath: String { directory.path + "/run/io.proctor.Admin" }

    /// Writes `policy` as `policy.d/50-bench.json` into a fresh directory and starts proctord on it.
    convenience init(options: BenchOptions, policy: Policy, extraArguments: [String] = []) throws(BenchError) {
        let directory = try TemporaryDirectory(prefix: "proctor-bench")
        do {
            try Self.writePolicy(policy, into: directory.path)
            try self.init(options: options, directory: directory, extraArguments: extraArguments)
        } catch {
            directory.remove()
            throw error
        }
    }

    /// Starts proctord on `directory` (which holds `config/policy.d`), waiting for READY=1.
    init(options: BenchOptions, directory: TemporaryDirectory, extraArguments: [String] = []) throws(BenchError) {
        self.directory = directory
        let notify = try NotifySocket(path: directory.path + "/notify")
        let began = MonotonicClock.nanoseconds()
        process = try Subprocess.spawn(options.proctordPath, [
            "--config-dir", directory.path + "/config", "--state-dir", directory.path + "/state",
            "--runtime-dir", directory.path + "/run", "--log-target", "stderr",
        ] + extraArguments, environment: ["NOTIFY_SOCKET=\(notify.path)", "PATH=/usr/bin:/bin"])
        guard notify.waitForReady(timeoutSeconds: 30) else {
            process.stop()
            throw BenchError("proctord (\(options.proctordPath)) did not send READY=1 within 30 s")
        }
        startNanoseconds = MonotonicClock.nanoseconds() - began
    }

    /// Stops the daemon and removes its directories.
    func stop() {
        process.stop()
        directory.remove()
    }

    static func writePolicy(_ policy: Policy, into directory: String) throws(BenchError) {
        for sub in ["/config", "/config/policy.d", "/state", "/run"] where mkdir(directory + sub, 0o755) != 0 && errno != EEXIST {
            throw BenchError("cannot create \(directory + sub): \(String(cString: strerror(errno)))")
        }
        try writeFile(directory + "/config/policy.d/50-bench.json", policy.canonicalBytes)
    }
}
