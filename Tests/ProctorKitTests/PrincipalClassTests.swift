import Foundation
import ProctorKit
import Testing
import TestSupport

/// ApplicationMain's choice of class, observed in a child process running the test app.
@Suite struct PrincipalClassTests {
    static let recording = "proctor_kit_testapp.RecordingApplication"

    @Test(arguments: [PropertyListSerialization.PropertyListFormat.xml, .binary])
    func infoPlistNamesThePrincipalClass(format: PropertyListSerialization.PropertyListFormat) throws {
        let directory = try TemporaryDirectory()
        let plist = directory.appending("Info.plist")
        // Unqualified in XML, qualified in binary: both forms through the Info.plist path.
        try TestApp.writeInfoPlist(principal: format == .xml ? "RecordingApplication" : Self.recording,
                                   to: plist, format: format)
        let app = try TestApp.launch(infoPlist: plist.path)
        try app.waitForOutputLine(TestApp.launchLine(Self.recording))
        #expect(try app.terminate() == 0)
    }

    @Test func infoPlistBesideTheExecutableIsFound() throws {
        let directory = try TemporaryDirectory()
        let executable = try TestApp.copy(into: directory, at: "bin/\(TestApp.name)")
        try TestApp.writeInfoPlist(principal: "RecordingApplication", to: directory.appending("bin/Info.plist"), format: .xml)
        // A plist in the share folder too: the one beside the executable comes first.
        try TestApp.writeInfoPlist(principal: "NoSuchClass",
                                   to: directory.appending("share/\(TestApp.name)/Info.plist"), format: .xml)
        let app = try TestApp.launch(executable: executable)
        try app.waitForOutputLine(TestApp.launchLine(Self.recording))
        #expect(try app.terminate() == 0)
    }

    @Test func infoPlistInTheShareFolderIsFound() throws {
        let directory = try TemporaryDirectory()
        let executable = try TestApp.copy(into: directory, at: "bin/\(TestApp.name)")
        let plist = directory.appending("share/\(TestApp.name)/Info.plist")
        try TestApp.writeInfoPlist(principal: "NoSuchClass", to: plist, format: .binary)
        let app = try TestApp.launch(executable: executable)
        #expect(try app.waitForExit() == ApplicationExitStatus.classNotFound.rawValue)
        #expect(app.errorOutput.contains("principal class 'NoSuchClass' (from NSPrincipalClass in \(plist.path)) not found"))
    }

    @Test func argumentWinsOverInfoPlist() throws {
        let directory = try TemporaryDirectory()
        let plist = directory.appending("Info.plist")
        try TestApp.writeInfoPlist(principal: "NoSuchClass", to: plist, format: .xml)
        let app = try TestApp.launch(principal: "RecordingApplication", infoPlist: plist.path)
        try app.waitForOutputLine(TestApp.launchLine(Self.recording))
        #expect(try app.terminate() == 0)
    }

    @Test(arguments: [
        ("RecordingApplication", recording),                       // unqualified, main module
        (recording, recording),                                    // qualified
        ("Application", "ProctorKit.Application"),                 // unqualified, ProctorKit
        ("ProctorKit.Application", "ProctorKit.Application"),      // qualified, ProctorKit
    ])
    func argumentNamesThePrincipalClass(name: String, resolved: String) throws {
        let app = try TestApp.launch(principal: name)
        try app.waitForOutputLine(TestApp.launchLine(resolved))
        #expect(try app.terminate() == 0)
    }

    @Test func withNeitherArgumentNorInfoPlistTheClassIsApplication() throws {
        let app = try TestApp.launch()
        try app.waitForOutputLine(TestApp.launchLine("ProctorKit.Application"))
        #expect(try app.terminate() == 0)
    }

    @Test func unknownClassExitsWithOneClearLine() throws {
        let app = try TestApp.launch(principal: "NoSuchClass")
        #expect(try app.waitForExit() == ApplicationExitStatus.classNotFound.rawValue)
        #expect(app.output.isEmpty)
        #expect(app.errorOutput.contains(
            "\(TestApp.name): principal class 'NoSuchClass' (from the principalClassName argument of ApplicationMain) not found: tried proctor_kit_testapp.NoSuchClass, ProctorKit.NoSuchClass\n"))
    }

    @Test func nonApplicationClassExitsWithItsOwnStatus() throws {
        let directory = try TemporaryDirectory()
        let plist = directory.appending("Info.plist")
        try TestApp.writeInfoPlist(principal: "NotAnApplication", to: plist, format: .binary)
        let app = try TestApp.launch(infoPlist: plist.path)
        #expect(try app.waitForExit() == ApplicationExitStatus.notAnApplicationClass.rawValue)
        #expect(app.errorOutput.contains(
            "principal class 'NotAnApplication' (from NSPrincipalClass in \(plist.path)) is not Application or a subclass of it"))
    }

    @Test func delegateThatIsNotADelegateExitsWithItsOwnStatus() throws {
        let app = try TestApp.launch(delegate: "RecordingApplication")
        #expect(try app.waitForExit() == ApplicationExitStatus.notADelegateClass.rawValue)
        #expect(app.errorOutput.contains("delegate class 'RecordingApplication' (from the delegateClassName argument of ApplicationMain) does not conform to ApplicationDelegate"))
    }

    @Test func unreadableInfoPlistExitsWithItsOwnStatus() throws {
        let directory = try TemporaryDirectory()
        let plist = directory.appending("Info.plist")
        try Data("<plist><dict><key>NSPrincipalClass".utf8).write(to: plist)
        let app = try TestApp.launch(infoPlist: plist.path)
        #expect(try app.waitForExit() == ApplicationExitStatus.invalidInfoPlist.rawValue)
        #expect(app.errorOutput.contains("Info.plist \(plist.path): not a property list"))
    }

    /// Found by Fuzz/InfoPlistFuzz.swift: Foundation on Linux crashes the process bridging
    /// a set out of a binary plist, here `{"k": {"a"}}` written by hand (nothing in
    /// Foundation writes sets).
    @Test func binaryInfoPlistWithASetIsAnInfoPlistErrorNotACrash() throws {
        let directory = try TemporaryDirectory()
        let plist = directory.appending("Info.plist")
        let objects: [[UInt8]] = [[0xD1, 1, 2], [0x51, 0x6B], [0xC1, 3], [0x51, 0x61]]  // dict, "k", set, "a"
        var bytes = Array("bplist00".utf8)
        var offsets: [UInt8] = []
        for object in objects { offsets.append(UInt8(bytes.count)); bytes += object }
        let table = UInt8(bytes.count)
        bytes += offsets
        // Trailer: 5 unused bytes, sort version, offset size 1, reference size 1, then
        // object count, top object and offset table start as 64-bit big-endian numbers.
        bytes += [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, UInt8(objects.count)] + [UInt8](repeating: 0, count: 8)
            + [0, 0, 0, 0, 0, 0, 0, table]
        try Data(bytes).write(to: plist)
        let app = try TestApp.launch(infoPlist: plist.path)
        #expect(try app.waitForExit() == ApplicationExitStatus.invalidInfoPlist.rawValue)
        #expect(app.errorOutput.contains("Info.plist \(plist.path): a binary property list with a set in it"))
    }

    @Test func nonStringPrincipalClassIsAnInfoPlistError() throws {
        let directory = try TemporaryDirectory()
        let plist = directory.appending("Info.plist")
        try TestApp.writeInfoPlist(principal: 42, to: plist, format: .xml)
        let app = try TestApp.launch(infoPlist: plist.path)
        #expect(try app.waitForExit() == ApplicationExitStatus.invalidInfoPlist.rawValue)
        #expect(app.errorOutput.contains("NSPrincipalClass must be a non-empty string"))
    }
}
