import Foundation
import JSONCore
import ProctorKit
import ProctorPolicy

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
        if environment["TESTAPP_PRINT_CONFIG"] == "1" {
            logLine("config \(JSONValue.object(ManagedConfiguration.shared.dictionaryRepresentation()).serializedString())")
        }
        if let note = environment["TESTAPP_PROTECTED_NOTE"] {
            replaceProtectedNote(with: note)
        }
        askDataGuard()
        tryWrites()
        if let text = environment["TESTAPP_FEEDBACK"], let entry = (try? JSONParser.parse(text))?.objectValue {
            PolicyApplication.reportFeedback(key: entry["key"]?.stringValue ?? "", severity: .info,
                                             message: entry["message"]?.stringValue ?? "", data: entry["data"]?.objectValue)
        }
        return ProcessInfo.processInfo.environment["TESTAPP_DECLINE_LAUNCH"] != "1"
    }
    /// Logs the protected file `note` as `protected before=<text>` (`none` when missing, else
    /// `error=<why>`), then replaces it with `text`: `protected wrote` or `protected write error=<why>`.
    private func replaceProtectedNote(with text: String) {
        let storage = ProtectedStorage.shared
        do {
            logLine("protected before=" + String(decoding: try storage.read("note"), as: UTF8.self))
        } catch .noSuchFile {
            logLine("protected before=none")
        } catch {
            logLine("protected before error=\(error)")
        }
        do {
            try storage.write(Data(text.utf8), to: "note")
            logLine("protected wrote")
        } catch {
            logLine("protected write error=\(error)")
        }
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
    func applicationDidReceiveReload(_ application: Application) {
        logLine("delegate didReceiveReload")
        askDataGuard()
        tryWrites()
    }
    func applicationShouldRestart(_ application: Application, reason: String) {
        logLine("delegate shouldRestart reason=\(reason)")
    }

    /// With `TESTAPP_WRITE_PATHS` (a JSON array of paths), creates or truncates each file from
    /// the main thread and from a Dispatch worker and logs `write PATH main=R worker=R`, R being
    /// `ok` or `errno=N`: what the kernel lets the app's own code do.
    private func tryWrites() {
        guard let text = ProcessInfo.processInfo.environment["TESTAPP_WRITE_PATHS"],
              let paths = (try? JSONParser.parse(text))?.arrayValue?.compactMap(\.stringValue) else { return }
        @Sendable func attempt(_ path: String) -> String {
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard fd >= 0 else { return "errno=\(errno)" }
            close(fd)
            return "ok"
        }
        for path in paths {
            let onMain = attempt(path)
            let done = DispatchSemaphore(value: 0)
            nonisolated(unsafe) var onWorker = ""
            DispatchQueue.global().async {
                onWorker = attempt(path)
                done.signal()
            }
            done.wait()
            logLine("write \(path) main=\(onMain) worker=\(onWorker)")
        }
    }
    func application(_ application: Application, didReceiveRemoteNotification userInfo: [String: JSONValue]) {
        logLine("delegate didReceiveRemoteNotification \(JSONValue.object(userInfo).serializedString())")
    }
    func applicationManagedConfigurationDidChange(_ application: Application) {
        let config = JSONValue.object(ManagedConfiguration.shared.dictionaryRepresentation()).serializedString()
        logLine("delegate managedConfigurationDidChange config=\(config)")
    }
    func applicationWasBlocked(_ application: Application, reason: String) {
        logLine("delegate wasBlocked reason=\(reason)")
    }
    func applicationShouldWipeData(_ application: Application, directive: WipeDirective) {
        logLine("delegate shouldWipeData directive=\(directive.id ?? "\(directive.cause)")")
    }
    /// With `TESTAPP_POLICY_ANSWER` (`applied`, `error:REASON` or `unsupported:REASON`), logs
    /// `delegate didReceivePolicyChange VERSION` and answers that; otherwise the default.
    func application(_ application: Application, didReceivePolicyChange change: PolicyChange) -> PolicyAcknowledgement {
        guard let answer = ProcessInfo.processInfo.environment["TESTAPP_POLICY_ANSWER"] else { return .applied }
        logLine("delegate didReceivePolicyChange \(change.version)")
        let (kind, reason) = (answer.prefix { $0 != ":" }, String(answer.drop { $0 != ":" }.dropFirst()))
        switch kind {
        case "error": return .error(reason: reason)
        case "unsupported": return .unsupported(reason: reason)
        default: return .applied
        }
    }
    func application(_ application: Application, complianceDidChange compliance: ComplianceState) {
        switch compliance {
        case .compliant: logLine("delegate complianceDidChange compliant")
        case .warning(let reason): logLine("delegate complianceDidChange warning reason=\(reason)")
        case .violation(let reason): logLine("delegate complianceDidChange violation reason=\(reason)")
        }
    }

    /// With `TESTAPP_DATAGUARD_CASES` (a JSON array of `{"action", "target", "size"}`), logs
    /// `dataguard <index> allowed=<bool> rule=<rule>` for each case, asked through the
    /// DataGuard method an app would use.
    private func askDataGuard() {
        guard let text = ProcessInfo.processInfo.environment["TESTAPP_DATAGUARD_CASES"] else { return }
        guard let cases = (try? JSONParser.parse(text))?.arrayValue else {
            logLine("dataguard cases are not a JSON array")
            return
        }
        let guardian = DataGuard.shared
        for (index, entry) in cases.enumerated() {
            let target = entry["target"]?.stringValue
            let decision: Decision
            switch entry["action"]?.stringValue {
            case "clipboard.copy": decision = guardian.canCopy(to: target, length: entry["size"]?.intValue ?? 0)
            case "clipboard.paste": decision = guardian.canPaste(from: target)
            case "share.send": decision = guardian.canShare(to: target)
            case "share.receive": decision = guardian.canReceive(from: target)
            case "print": decision = guardian.canPrint()
            case "screen-capture": decision = guardian.canCaptureScreen()
            case "notification": decision = guardian.canNotify(showingOrgData: target == "org")
            case "file.export": decision = guardian.canExport(toPath: target ?? "")
            default:
                logLine("dataguard \(index) unknown action")
                continue
            }
            logLine("dataguard \(index) allowed=\(decision.allowed) rule=\(decision.rule)")
        }
    }
}
