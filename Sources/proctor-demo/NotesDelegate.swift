import Foundation
import JSONCore
import ProctorKit
import ProctorPolicy

/// The demo's delegate: logs every lifecycle call, reads its managed configuration, keeps a
/// note in protected storage (its declared data directory, encrypted) and asks DataGuard about every data action.
final class NotesDelegate: ApplicationDelegate {
    static let appID = "io.proctor.demo.notes"

    /// `~/.local/share/proctor-demo`, the folder the Info.plist declares in
    /// `ProctorDataDirectories` (ProctorKit expands `~` from `$HOME`, as here).
    private let notesFolder = URL(fileURLWithPath: home).appendingPathComponent(".local/share/proctor-demo")

    private var configurationObserver: (any NSObjectProtocol)?

    init() {}

    func application(_ application: Application,
                     didFinishLaunchingWithOptions launchOptions: [Application.LaunchOptionsKey: Any]?) -> Bool {
        log("didFinishLaunching as \(String(reflecting: type(of: application)))")
        if let policyApplication = application as? PolicyApplication {
            log("policy \(policyApplication.policyVersion ?? "?"), state \(policyApplication.policyState?.rawValue ?? "?")")
        }
        showConfiguration()
        saveNote("launched at \(Date())")
        tryDataActions()
        configurationObserver = NotificationCenter.default.addObserver(forName: ManagedConfiguration.didChangeNotification, object: nil, queue: nil) { _ in
            log("notification: ManagedConfiguration.didChangeNotification")
        }
        return true
    }

    func applicationDidBecomeActive(_ application: Application) { log("didBecomeActive") }
    func applicationWillResignActive(_ application: Application) { log("willResignActive") }
    func applicationDidEnterBackground(_ application: Application) { log("didEnterBackground (Ctrl-Z; fg to continue)") }
    func applicationWillEnterForeground(_ application: Application) { log("willEnterForeground") }
    func applicationWillTerminate(_ application: Application) { log("willTerminate") }
    func applicationDidReceiveMemoryWarning(_ application: Application) { log("didReceiveMemoryWarning") }
    func applicationUserDidChange(_ application: Application) { log("userDidChange") }

    func applicationDidReceiveReload(_ application: Application) {
        log("didReceiveReload (SIGHUP): asking DataGuard again")
        tryDataActions()
    }

    func application(_ application: Application, didReceiveRemoteNotification userInfo: [String: JSONValue]) {
        log("didReceiveRemoteNotification \(JSONValue.object(userInfo).serializedString())")
        if userInfo["command"]?.stringValue == "status" {
            PolicyApplication.reportFeedback(key: "notes", severity: .info, message: "notes folder \(notesFolder.path)")
        }
    }

    func applicationManagedConfigurationDidChange(_ application: Application) {
        log("managedConfigurationDidChange")
        showConfiguration()
        tryDataActions()
    }

    func applicationWasBlocked(_ application: Application, reason: String) {
        log("wasBlocked: \(reason)")
    }

    func applicationShouldWipeData(_ application: Application, directive: WipeDirective) {
        log("shouldWipeData (\(directive.cause == .retired ? "retired" : "directive \(directive.id ?? "")")): "
            + "ProctorKit removes \(notesFolder.path) next")
    }

    // MARK: What a notes app does

    private func showConfiguration() {
        let configuration = ManagedConfiguration.shared
        log("config serverURL=\(configuration.string(forKey: "serverURL") ?? "(none)") "
            + "syncDays=\(configuration.integer(forKey: "syncDays").map(String.init) ?? "(none)") "
            + "theme=\(configuration.string(forKey: "theme") ?? "(none)")")
    }

    /// Appends `text` to the note kept in `ProtectedStorage.shared` (configured by
    /// PolicyApplication in `~/.local/share/proctor-demo/protected`, encrypted with the key
    /// proctord released): the text is never on disk in plaintext.
    private func saveNote(_ text: String) {
        let storage = ProtectedStorage.shared
        do {
            var notes = Data()
            do {
                notes = try storage.read("notes")
            } catch .noSuchFile {
                // The first note.
            }
            notes.append(Data((text + "\n").utf8))
            try storage.write(notes, to: "notes")
            log("saved note \(notes.split(separator: UInt8(ascii: "\n")).count) in protected storage (\(storage.directory ?? "?"))")
        } catch {
            log("cannot save a note: \(error)")
        }
    }

    private func tryDataActions() {
        let guardian = DataGuard.shared
        let answers: [(String, Decision)] = [
            ("copy 12 characters to com.example.notes", guardian.canCopy(to: "com.example.notes", length: 12)),
            ("copy 12 characters to org.mozilla.firefox", guardian.canCopy(to: "org.mozilla.firefox", length: 12)),
            ("copy 400 characters to org.mozilla.firefox", guardian.canCopy(to: "org.mozilla.firefox", length: 400)),
            ("paste from org.mozilla.firefox", guardian.canPaste(from: "org.mozilla.firefox")),
            ("share to com.example.notes", guardian.canShare(to: "com.example.notes")),
            ("share to org.partner.viewer", guardian.canShare(to: "org.partner.viewer")),
            ("share to org.mozilla.firefox", guardian.canShare(to: "org.mozilla.firefox")),
            ("receive from org.mozilla.firefox", guardian.canReceive(from: "org.mozilla.firefox")),
            ("print", guardian.canPrint()),
            ("capture the screen", guardian.canCaptureScreen()),
            ("notify with a note's title", guardian.canNotify(showingOrgData: true)),
            ("notify \"1 new note\"", guardian.canNotify(showingOrgData: false)),
            ("export to \(home)/Documents/Work/notes.txt", guardian.canExport(toPath: "\(home)/Documents/Work/notes.txt")),
            ("export to /tmp/notes.txt", guardian.canExport(toPath: "/tmp/notes.txt")),
        ]
        for (action, decision) in answers {
            log("  \(decision.allowed ? "allowed" : "denied ") \(action) — \(decision.rule)")
        }
    }
}

/// The user's home as `$HOME` says, else the password database's.
let home = ProcessInfo.processInfo.environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path

/// One line on standard output with the time, as a service's log.
func log(_ message: String) {
    let time = Date().formatted(.iso8601.time(includingFractionalSeconds: true))
    FileHandle.standardOutput.write(Data("[\(time)] \(message)\n".utf8))
}
