import Foundation
import JSONCore
import ProctorKit

/// Logs each delegate call as `delegate <event>`; the launch line names the application class.
final class LoggingDelegate: ApplicationDelegate {
    init() {}

    func application(_ application: Application,
                     didFinishLaunchingWithOptions launchOptions: [Application.LaunchOptionsKey: Any]?) -> Bool {
        logLine("delegate didFinishLaunching class=\(String(reflecting: type(of: application)))")
        let environment = ProcessInfo.processInfo.environment
        if let key = environment["TESTAPP_PRINT_INFO_KEY"] {
            logLine("info \(key)=\(Application.infoDictionary[key].map { "\($0)" } ?? "nil")")
        }
        if environment["TESTAPP_REPORT_CHILD_SIGNALS"] == "1" {
            reportChildSignalState()
        }
        return ProcessInfo.processInfo.environment["TESTAPP_DECLINE_LAUNCH"] != "1"
    }
    /// Runs a child that prints its blocked and ignored signal masks, as `child SigBlk: …`.
    private func reportChildSignalState() {
        let child = Process()
        let output = Pipe()
        child.executableURL = URL(fileURLWithPath: "/bin/grep")
        child.arguments = ["-E", "^Sig(Blk|Ign)", "/proc/self/status"]
        child.standardOutput = output
        do {
            try child.run()
            child.waitUntilExit()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            for line in text.split(separator: "\n") {
                logLine("child " + line.replacingOccurrences(of: "\t", with: " "))
            }
        } catch {
            logLine("child failed: \(error)")
        }
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
