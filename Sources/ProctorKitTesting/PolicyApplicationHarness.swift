// A test needs nothing but `import ProctorKitTesting` (and Testing): ProctorKit, and with it
// JSONCore and ProctorPolicy, come along.
@_exported public import ProctorKit

/// Runs a `PolicyApplication` inside a test process against a `FakeAgent`, without
/// `ApplicationMain` (which takes the process over): launch it, then call its lifecycle
/// methods (`application.didEnterBackground()`, …) and drive the agent, and watch what the
/// delegate does.
///
/// One harness at a time per process: the application's `DataGuard.shared` and
/// `ManagedConfiguration.shared` are process-wide (mark the suite `.serialized`). A delegate
/// under test implements `applicationWasBlocked(_:reason:)`, whose default ends the process.
@MainActor
public final class PolicyApplicationHarness {
    public let application: PolicyApplication
    public let agent: FakeAgent

    /// A `PolicyApplication` (or `applicationClass`) with `delegate`, registering as `appID`
    /// at `version` with `agent`; `dataDirectories` as `ProctorDataDirectories` would declare.
    public init(agent: FakeAgent, appID: String, version: String? = nil, dataDirectories: [String] = [],
                delegate: any ApplicationDelegate, applicationClass: PolicyApplication.Type = PolicyApplication.self) {
        PolicyApplication.appID = appID
        PolicyApplication.appVersion = version
        PolicyApplication.dataDirectories = dataDirectories
        PolicyApplication.agentTransport = agent
        self.agent = agent
        application = applicationClass.init()
        application.delegate = delegate
    }

    /// Launches as `ApplicationMain` would: `prepareLaunch`, then, when it proceeds,
    /// didFinishLaunching and didBecomeActive. Returns what `prepareLaunch` decided; pushes
    /// from the agent reach the delegate on the main actor from then on.
    @discardableResult
    public func launch(arguments: [String] = ["test"]) async -> Application.LaunchDecision {
        let options: [Application.LaunchOptionsKey: Any] = [.arguments: arguments]
        let decision = await application.prepareLaunch(options: options)
        guard decision == .proceed else { return decision }
        if application.didFinishLaunching(options: options) {
            application.didBecomeActive()
        }
        return decision
    }
}
