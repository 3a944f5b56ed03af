import Foundation
import Testing
import Varlink

/// The daemon's interface files are the protocol contract; they must parse as Varlink IDL.
/// (Tests/python/test_interfaces.py checks them with the independent Python parser too.)
@Suite struct ProctorInterfaceFileTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/ProctorProtocol/Interfaces").path + "/"

    @Test(arguments: [
        ("io.proctor.Agent", ["AcknowledgeWipe", "Decide", "GetDataKey", "GetInfo", "Register", "ReportEvent", "ReportFeedback",
                              "Subscribe"],
         ["AppBlocked", "DataKeyUnavailable", "IdentityMismatch", "InvalidParameter", "InvalidSession", "StorageFailure", "UnknownApp"]),
        ("io.proctor.Admin", ["ApplyBundle", "ApplyPolicy", "Decide", "EventHistory", "Events", "GetApp", "GetPolicy", "ListApps", "Notify", "PolicyHistory",
                              "Reload", "RollbackPolicy", "Status", "ValidatePolicy", "Wipe"],
         ["BundleRefused", "InvalidParameter", "InvalidPolicy", "StorageFailure", "UnknownApp", "UnknownVersion",
          "VersionConflict", "VersionReused"]),
    ])
    func interfaceFileParses(name: String, methods: [String], errors: [String]) throws {
        let text = try String(contentsOfFile: Self.folder + name + ".varlink", encoding: .utf8)
        let description = try VarlinkInterfaceDescription(parsing: text)
        #expect(description.name == name)
        #expect(description.methods.keys.sorted() == methods)
        #expect(description.errors.keys.sorted() == errors)
    }
}
