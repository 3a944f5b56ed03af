import Glibc
import JSONCore
import ProctorPolicy

/// What the daemon benchmarks share: the synthetic policy with one app the bench itself
/// may register as (its `match.executable` is this executable), and `Decide` calls for that
/// app over the in-process workload's mix of actions, targets and sizes.
struct BenchDaemonWorkload {
    static let appCount = 1_000
    /// An authorized app with its own settings for every rule (not left to defaults).
    static let appID = SyntheticPolicy.appID(1)

    let synthetic: SyntheticPolicy
    var policy: Policy

    /// Above this many apps each app keeps only its match, state, clipboard level and print
    /// toggle: 100 000 apps of the full synthetic kind are 45 MiB of JSON, and a policy
    /// directory may hold 16 MiB in all (`PolicyLimits.maxDocumentBytes`).
    static let fullAppLimit = 10_000

    init(appCount: Int = Self.appCount) throws(BenchError) {
        synthetic = SyntheticPolicy(appCount: appCount)
        policy = synthetic.policy
        if appCount > Self.fullAppLimit {
            policy.apps = policy.apps.mapValues { app in
                AppPolicy(state: app.state, match: MatchRule(executable: app.match?.executable),
                          settings: AppSettings(dlp: DLPSettings(clipboardLevel: app.settings.dlp.clipboardLevel,
                                                                 print: app.settings.dlp.print)))
            }
        }
        policy.apps[Self.appID]?.match = MatchRule(executable: try Self.executablePath(), users: ["*"])
    }

    /// This process's executable as proctord sees it (`/proc/PID/exe`, resolved).
    static func executablePath() throws(BenchError) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { throw BenchError("readlink /proc/self/exe failed: \(String(cString: strerror(errno)))") }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Registers on `connection` and returns the session id.
    static func register(_ connection: MessageConnection) throws(BenchError) -> String {
        let reply = try connection.call("io.proctor.Agent.Register", ["appId": .string(appID), "version": "2.5.0"])
        guard let session = reply["session"]?.stringValue else { throw BenchError("Register replied without a session") }
        return session
    }

    /// `count` encoded `Decide` calls of `session`, mixed as the in-process workload.
    func decideCalls(session: String, count: Int) -> [[UInt8]] {
        synthetic.requests(count: count, seed: 7).map { request in
            var parameters: [String: JSONValue] = ["session": .string(session), "action": .string(request.action.rawValue)]
            if let target = request.target { parameters["target"] = .string(target) }
            if let size = request.size { parameters["size"] = .number(size) }
            return MessageConnection.encode("io.proctor.Agent.Decide", parameters)
        }
    }
}
