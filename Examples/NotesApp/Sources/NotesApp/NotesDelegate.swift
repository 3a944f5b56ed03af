import Foundation
import ProctorKit

/// The notes app: it syncs as its managed configuration says, asks DataGuard before a
/// notification or a copy leaves the app, and obeys the administrator's commands.
///
/// Internal, like any type of an executable: the tests reach it with `@testable import NotesApp`.
final class NotesDelegate: ApplicationDelegate {
    /// How many days of notes to keep on this machine (`config.syncDays`).
    private(set) var syncDays = 7
    private(set) var serverURL: String?
    private(set) var syncCount = 0
    /// Why proctord stopped the app, once it has.
    private(set) var blockedReason: String?

    init() {}

    func application(_ application: Application,
                     didFinishLaunchingWithOptions launchOptions: [Application.LaunchOptionsKey: Any]?) -> Bool {
        readConfiguration()
        return true
    }

    func applicationManagedConfigurationDidChange(_ application: Application) {
        readConfiguration()
    }

    func application(_ application: Application, didReceiveRemoteNotification userInfo: [String: JSONValue]) {
        if userInfo["command"]?.stringValue == "sync" { sync() }
    }

    func applicationWasBlocked(_ application: Application, reason: String) {
        blockedReason = reason
        FileHandle.standardError.write(Data("notes: stopped by policy: \(reason)\n".utf8))
    }

    /// The text to show for a note that arrived, or nil when policy allows no notification:
    /// the title only where organisation data may appear in notifications.
    func notificationText(forNewNoteTitled title: String) -> String? {
        if DataGuard.shared.canNotify(showingOrgData: true).allowed { return "New note: \(title)" }
        if DataGuard.shared.canNotify(showingOrgData: false).allowed { return "1 new note" }
        return nil
    }

    /// Copies a note's text for the app `destination`, if policy lets it go there.
    func copy(_ text: String, to destination: String?) -> Decision {
        DataGuard.shared.canCopy(to: destination, length: text.count)
    }

    private func readConfiguration() {
        let configuration = ManagedConfiguration.shared
        syncDays = configuration.integer(forKey: "syncDays") ?? 7
        serverURL = configuration.string(forKey: "serverURL")
    }

    private func sync() {
        syncCount += 1
    }
}
