import ProctorKit

/// An Application subclass that logs `application <event>` before letting each event through,
/// showing that a subclass sees every event before the delegate (as PolicyApplication will).
final class RecordingApplication: Application {
    override func prepareLaunch(options: [LaunchOptionsKey: Any]) async -> LaunchDecision {
        logLine("application prepareLaunch")
        return .proceed
    }
    override func didBecomeActive() { logLine("application didBecomeActive"); super.didBecomeActive() }
    override func willResignActive() { logLine("application willResignActive"); super.willResignActive() }
    override func didEnterBackground() { logLine("application didEnterBackground"); super.didEnterBackground() }
    override func willEnterForeground() { logLine("application willEnterForeground"); super.willEnterForeground() }
    override func willTerminate() { logLine("application willTerminate"); super.willTerminate() }
    override func didReceiveReload() { logLine("application didReceiveReload"); super.didReceiveReload() }
}

/// Refuses every launch, as PolicyApplication will for a blocked app.
final class RefusingApplication: Application {
    override func prepareLaunch(options: [LaunchOptionsKey: Any]) async -> LaunchDecision {
        .refuse(reason: "refused by the test application")
    }
}

/// A class that is not an Application, for the wrong-class test.
final class NotAnApplication {}
