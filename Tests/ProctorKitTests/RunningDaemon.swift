import Foundation
import JSONCore
import TestSupport
import Varlink

/// The real proctord, started on directories of a test's own (config, state, runtime), the
/// way Tests/python/conftest.py starts it: foreground, logs on standard error, ready when
/// READY=1 arrives on a NOTIFY_SOCKET the test listens on.
final class RunningDaemon {
    let root: TemporaryDirectory
    private(set) var process: ChildProcess?
    private var starts = 0

    var configDirectory: String { root.appending("config").path }
    var runtimeDirectory: String { root.appending("run").path }
    var agentSocket: String { runtimeDirectory + "/io.proctor.Agent" }
    var adminSocket: String { runtimeDirectory + "/io.proctor.Admin" }

    /// Writes `policy` as the only drop-in and starts proctord on it.
    init(policy: JSONValue) throws {
        root = try TemporaryDirectory(prefix: "proctor-kit")
        let policyDirectory = root.appending("config/policy.d")
        try FileManager.default.createDirectory(at: policyDirectory, withIntermediateDirectories: true)
        try Data(policy.serialized()).write(to: policyDirectory.appendingPathComponent("00-test.json"))
        try start()
    }

    /// Starts proctord (again, after `kill()`) and waits for READY=1.
    func start() throws {
        starts += 1
        let notify = try NotifySocketListener(path: root.appending("notify-\(starts).sock").path)
        let daemon = try ChildProcess(BuiltProducts.executable("proctord"),
                                      arguments: ["--config-dir", configDirectory, "--state-dir", root.appending("state").path,
                                                  "--runtime-dir", runtimeDirectory, "--log-target", "stderr"],
                                      environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": nil, "WATCHDOG_PID": nil])
        process = daemon
        do {
            try notify.waitFor("READY=1", timeout: .seconds(20))
        } catch {
            throw TestSupportError("proctord did not become ready: \(daemon.errorOutput)")
        }
        // systemd takes READY=1 from the main process only (NotifyAccess=main, Type=notify's default).
        guard let sender = notify.sender(of: "READY=1"), sender == daemon.pid else {
            throw TestSupportError("READY=1 came from pid \(notify.sender(of: "READY=1").map(String.init) ?? "unknown"), not proctord's \(daemon.pid)")
        }
    }

    /// Ends proctord with SIGKILL, as a crash would, and waits for it.
    func kill() throws {
        guard let process else { return }
        try process.send(SIGKILL)
        _ = try process.waitForExit()
        self.process = nil
    }

    /// Calls an `io.proctor.Admin` method (the test runs as root, so it may).
    func admin(_ method: String, _ parameters: [String: JSONValue] = [:]) throws -> [String: JSONValue] {
        try VarlinkClient(path: adminSocket, timeout: .seconds(10)).call("io.proctor.Admin.\(method)", parameters)
    }

    deinit {
        if let process {
            _ = try? process.terminate()
        }
    }
}

/// A test app run as `PolicyApplication` (chosen by its Info.plist) against a daemon.
enum PolicyTestApp {
    /// The executable proctord will see (`/proc/PID/exe`): the built test app's real path.
    static func executablePath() throws -> String {
        try BuiltProducts.executable(TestApp.name).resolvingSymlinksInPath().path
    }

    /// Writes an Info.plist naming PolicyApplication with `appID`, launches the test app against
    /// `daemon` with `home` as its home folder.
    static func launch(appID: String, version: String = "1.0.0", dataDirectories: [String] = [],
                       daemon: RunningDaemon, home: String? = nil,
                       environment extra: [String: String?] = [:]) throws -> ChildProcess {
        let plist = daemon.root.appending("Info-\(appID).plist")
        let info: [String: Any] = ["NSPrincipalClass": "ProctorKit.PolicyApplication", "ProctorAppID": appID,
                                   "CFBundleShortVersionString": version, "ProctorDataDirectories": dataDirectories]
        try PropertyListSerialization.data(fromPropertyList: info, format: .xml, options: 0).write(to: plist)
        var environment: [String: String?] = ["PROCTOR_AGENT_SOCKET": daemon.agentSocket, "HOME": home ?? daemon.root.path]
        environment.merge(extra) { _, new in new }
        return try TestApp.launch(infoPlist: plist.path, environment: environment)
    }
}
