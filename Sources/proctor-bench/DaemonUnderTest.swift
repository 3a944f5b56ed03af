import LinuxIO
import Glibc
import ProctorPolicy
import TestSupport

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
        let directory = try TemporaryDirectory.make(prefix: "proctor-bench")
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
        let notify: NotifySocketListener
        do { notify = try NotifySocketListener(path: directory.path + "/notify") } catch { throw BenchError("\(error)") }
        let began = MonotonicClock.nanoseconds()
        process = try Subprocess.spawn(options.proctordPath, [
            "--config-dir", directory.path + "/config", "--state-dir", directory.path + "/state",
            "--runtime-dir", directory.path + "/run", "--log-target", "stderr",
        ] + extraArguments, environment: ["NOTIFY_SOCKET=\(notify.path)", "PATH=/usr/bin:/bin"], cpu: options.peerCPU)
        do {
            // Generous: a 100 000-app policy on a busy machine takes seconds.
            try notify.waitFor("READY=1", timeout: .seconds(120))
        } catch {
            let exited = process.hasExited()
            process.stop()
            throw BenchError("proctord (\(options.proctordPath)) " + (exited ? "exited before READY=1" : "did not send READY=1 within 120 s"))
        }
        // The figures read the spawned process (its memory, its CPU clock, its stop): a wrapper
        // given as --proctord that starts proctord as its child rather than exec'ing it would be
        // measured instead, and leave proctord running. systemd refuses such a READY=1 too
        // (NotifyAccess=main).
        if let sender = notify.sender(of: "READY=1"), sender != process.pid {
            kill(sender, SIGTERM)
            process.stop()
            throw BenchError("READY=1 came from pid \(sender), not from the process the bench started (pid \(process.pid)): "
                             + "a --proctord wrapper must exec proctord (`exec … \"$@\"`), not run it as a child")
        }
        startNanoseconds = MonotonicClock.nanoseconds() - began
    }

    /// Stops the daemon and removes its directories.
    func stop() {
        process.stop()
        directory.remove()
    }

    /// Apps per `policy.d` file: a 100 000-app policy is larger than one document may be
    /// (`PolicyLimits.maxDocumentBytes`), so it is written as drop-ins of this many apps.
    static let appsPerFile = 10_000

    /// Writes `policy` as `policy.d/50-bench.json` (`50-bench-N.json` for each further
    /// `appsPerFile` apps, each file with the version and defaults), replacing what was there.
    static func writePolicy(_ policy: Policy, into directory: String) throws(BenchError) {
        for sub in ["/config", "/config/policy.d", "/state", "/run"] where mkdir(directory + sub, 0o755) != 0 && errno != EEXIST {
            throw BenchError("cannot create \(directory + sub): \(String(cString: strerror(errno)))")
        }
        let ids = policy.apps.keys.sorted()
        for (index, start) in stride(from: 0, to: max(ids.count, 1), by: appsPerFile).enumerated() {
            let chunk = ids[start..<min(start + appsPerFile, ids.count)]
            let part = Policy(version: policy.version, defaults: policy.defaults,
                              apps: Dictionary(uniqueKeysWithValues: chunk.map { ($0, policy.apps[$0]!) }))
            try writeFile(directory + "/config/policy.d/50-bench\(index == 0 ? "" : "-\(index)").json", part.canonicalBytes)
        }
    }
}
