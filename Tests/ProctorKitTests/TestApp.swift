import Foundation
import TestSupport

/// Launches `proctor-kit-testapp` (see its main.swift for what the environment selects).
enum TestApp {
    static let name = "proctor-kit-testapp"

    static func launch(principal: String? = nil, delegate: String? = nil,
                       infoPlist: String? = nil, executable: URL? = nil,
                       environment extra: [String: String?] = [:]) throws -> ChildProcess {
        var environment: [String: String?] = [
            "TESTAPP_PRINCIPAL": principal,
            "TESTAPP_DELEGATE": delegate,
            "PROCTOR_INFO_PLIST": infoPlist,
            "NOTIFY_SOCKET": nil,
            "WATCHDOG_USEC": nil,
            "WATCHDOG_PID": nil,
        ]
        environment.merge(extra) { _, new in new }
        return try ChildProcess(executable ?? BuiltProducts.executable(name), environment: environment)
    }

    /// The launch line the test app's delegate logs for `className`.
    static func launchLine(_ className: String) -> String {
        "delegate didFinishLaunching class=\(className)"
    }

    /// Writes an Info.plist naming `principal` in `format`.
    static func writeInfoPlist(principal: Any, to url: URL,
                               format: PropertyListSerialization.PropertyListFormat) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try PropertyListSerialization.data(fromPropertyList: ["NSPrincipalClass": principal], format: format, options: 0)
            .write(to: url)
    }

    /// A copy of the test app at `directory/relativePath`, for the lookups relative to the executable.
    static func copy(into directory: TemporaryDirectory, at relativePath: String) throws -> URL {
        let destination = directory.appending(relativePath)
        try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: BuiltProducts.executable(name), to: destination)
        return destination
    }
}
