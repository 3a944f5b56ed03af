import Foundation
import JSONCore
import ProctorKit

/// Logs each delegate call as `delegate <event>`; the launch line names the application class.
final class LoggingDelegate: ApplicationDelegate {
    init() {}

    func application(_ application: Application,
                     didFinishLaunchingWithOptions launchOptions: [Application.LaunchOptionsKey: Any]?) -> Bool {
        logLine("delegate didFinishLaunching class=\(String(reflecting: type(of: application)))")
        return ProcessInfo.processInfo.environment["TESTAPP_DECLINE_LAUNCH"] != "1"
    }
    func applicationDidBecomeActive(_ application: Application) { logLine("delegate didBecomeActive") }
    func applicationWillResignActive(_ application: Application) { logLine("delegate willResignActive") }
    func applicationDidEnterBackground(_ application: Application) { logLine("delegate didEnterBackground") }
    func applicationWillEnterForeground(_ application: Application) { logLine("delegate willEnterForeground") }
    func applicationWillTerminate(_ application: Application) { logLine("delegate willTerminate") }
    func applicationDidReceiveMemoryWarning(_ application: Application) { logLine("delegate didReceiveMemoryWarning") }
    func applicationUserDidChange(_ application: Application) { logLine("delegate userDidChange") }
    func applicationDidReceiveReload(_ application: Application) { logLine("delegate didReceiveReload") }
}
