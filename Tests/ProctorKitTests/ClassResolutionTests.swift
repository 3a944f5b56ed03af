import Foundation
@testable import ProctorKit
import Testing
import TestSupport

/// An Application subclass living in the test module, for in-process resolution.
final class TestPrincipal: Application {}
/// A delegate living in the test module.
final class TestDelegate: ApplicationDelegate {}
/// Neither an Application nor a delegate.
final class Unrelated {}

@MainActor
@Suite struct ClassResolutionTests {
    let resolver = ClassResolver(modules: ["ProctorKitTests", "ProctorKit"])

    @Test func unqualifiedNamesAreQualifiedWithEachModuleInOrder() {
        let resolver = ClassResolver(callerFileID: "MyApp/main.swift", executablePath: "/usr/bin/my-app")
        #expect(resolver.modules == ["MyApp", "my_app", "ProctorKit"])
        #expect(resolver.candidates(for: "Delegate") == ["MyApp.Delegate", "my_app.Delegate", "ProctorKit.Delegate"])
        #expect(resolver.candidates(for: "Other.Delegate") == ["Other.Delegate"])
    }

    @Test func duplicateModulesAreTriedOnce() {
        let resolver = ClassResolver(callerFileID: "tool/main.swift", executablePath: "/usr/bin/tool")
        #expect(resolver.modules == ["tool", "ProctorKit"])
    }

    @Test(arguments: ["", ".", "A.", ".A", "A.B.C", "1A", "A-B", "A B", "Ä"])
    func invalidNamesHaveNoCandidates(name: String) {
        #expect(resolver.candidates(for: name).isEmpty)
        #expect(resolver.resolve(name) == nil)
    }

    @Test func executableNamesBecomeSwiftPMModuleNames() {
        #expect(ClassResolver.moduleName(forExecutable: "proctor-kit-testapp") == "proctor_kit_testapp")
        #expect(ClassResolver.moduleName(forExecutable: "2fa.tool") == "_2fa_tool")
    }

    @Test func resolvesUnqualifiedQualifiedAndProctorKitNames() throws {
        #expect(resolver.resolve("TestPrincipal") == TestPrincipal.self)
        #expect(resolver.resolve("ProctorKitTests.TestPrincipal") == TestPrincipal.self)
        #expect(resolver.resolve("Application") == Application.self)
        #expect(resolver.resolve("NoSuchClass") == nil)
    }

    @Test func argumentWinsOverInfoPlist() throws {
        let plist = InfoPlist(path: "/x/Info.plist", dictionary: ["NSPrincipalClass": "Application"])
        let configuration = try LaunchConfiguration.resolve(
            principalClassName: "TestPrincipal", delegateClassName: "TestDelegate", infoPlist: plist, resolver: resolver)
        #expect(configuration.applicationClass == TestPrincipal.self)
        #expect(configuration.delegateClass == TestDelegate.self)
    }

    @Test func infoPlistNamesThePrincipalWhenTheArgumentIsNil() throws {
        let plist = InfoPlist(path: "/x/Info.plist", dictionary: ["NSPrincipalClass": "ProctorKitTests.TestPrincipal"])
        let configuration = try LaunchConfiguration.resolve(
            principalClassName: nil, delegateClassName: nil, infoPlist: plist, resolver: resolver)
        #expect(configuration.applicationClass == TestPrincipal.self)
        #expect(configuration.delegateClass == nil)
    }

    @Test func withNeitherTheClassIsApplication() throws {
        let configuration = try LaunchConfiguration.resolve(
            principalClassName: nil, delegateClassName: nil, infoPlist: nil, resolver: resolver)
        #expect(configuration.applicationClass == Application.self)
    }

    @Test func failuresNameTheClassAndWhereTheNameCameFrom() {
        let plist = InfoPlist(path: "/x/Info.plist", dictionary: ["NSPrincipalClass": "Missing"])
        #expect(throws: LaunchConfiguration.Failure.classNotFound(
            role: "principal", name: "Missing", origin: .infoPlist(path: "/x/Info.plist"),
            tried: ["ProctorKitTests.Missing", "ProctorKit.Missing"])) {
            try LaunchConfiguration.resolve(principalClassName: nil, delegateClassName: nil, infoPlist: plist, resolver: resolver)
        }
        #expect(throws: LaunchConfiguration.Failure.notAnApplicationClass(name: "Unrelated", origin: .argument("principalClassName"))) {
            try LaunchConfiguration.resolve(principalClassName: "Unrelated", delegateClassName: nil, infoPlist: nil, resolver: resolver)
        }
        #expect(throws: LaunchConfiguration.Failure.notADelegateClass(name: "TestPrincipal", origin: .argument("delegateClassName"))) {
            try LaunchConfiguration.resolve(principalClassName: nil, delegateClassName: "TestPrincipal", infoPlist: nil, resolver: resolver)
        }
        let message = LaunchConfiguration.Failure.classNotFound(
            role: "principal", name: "Missing", origin: .infoPlist(path: "/x/Info.plist"), tried: ["A.Missing"]).description
        #expect(message == "principal class 'Missing' (from NSPrincipalClass in /x/Info.plist) not found: tried A.Missing")
    }

    @Test func principalClassThatIsNotAStringIsAnInfoPlistError() {
        let plist = InfoPlist(path: "/x/Info.plist", dictionary: ["NSPrincipalClass": 3])
        #expect(throws: LaunchConfiguration.Failure.self) {
            try LaunchConfiguration.resolve(principalClassName: nil, delegateClassName: nil, infoPlist: plist, resolver: resolver)
        }
    }
}

@Suite struct InfoPlistTests {
    @Test func lookupOrderWithoutTheEnvironmentVariable() {
        let candidates = InfoPlist.candidates(environment: [:], executablePath: "/opt/notes/bin/notes")
        #expect(candidates.map(\.path) == ["/opt/notes/bin/Info.plist", "/opt/notes/share/notes/Info.plist"])
        #expect(candidates.allSatisfy { !$0.required })
    }

    @Test func theEnvironmentVariableIsTheOnlyCandidateAndMustExist() throws {
        let candidates = InfoPlist.candidates(environment: ["PROCTOR_INFO_PLIST": "/etc/notes.plist"],
                                              executablePath: "/usr/bin/notes")
        #expect(candidates.map(\.path) == ["/etc/notes.plist"])
        #expect(candidates.allSatisfy { $0.required })
        #expect(throws: InfoPlist.Failure.self) {
            try InfoPlist.locate(environment: ["PROCTOR_INFO_PLIST": "/nonexistent/Info.plist"], executablePath: "/usr/bin/notes")
        }
    }

    @Test func nothingFoundIsNoInfoPlist() throws {
        let directory = try TemporaryDirectory()
        #expect(try InfoPlist.locate(environment: [:], executablePath: directory.appending("bin/app").path) == nil)
    }

    @Test(arguments: [PropertyListSerialization.PropertyListFormat.xml, .binary])
    func readsXMLAndBinaryPlists(format: PropertyListSerialization.PropertyListFormat) throws {
        let directory = try TemporaryDirectory()
        let path = directory.appending("Info.plist").path
        let data = try PropertyListSerialization.data(
            fromPropertyList: ["NSPrincipalClass": "Notes.NotesApplication", "ProctorAppID": "com.example.notes"],
            format: format, options: 0)
        try data.write(to: URL(fileURLWithPath: path))
        let plist = try InfoPlist.load(path: path)
        #expect(try plist.principalClassName() == "Notes.NotesApplication")
        #expect(plist.dictionary["ProctorAppID"] as? String == "com.example.notes")
    }

    @Test func rejectsNonPlistsAndNonDictionaries() throws {
        let directory = try TemporaryDirectory()
        let garbage = directory.appending("garbage.plist")
        try Data("not a plist <".utf8).write(to: garbage)
        #expect(throws: InfoPlist.Failure.self) { try InfoPlist.load(path: garbage.path) }
        let array = directory.appending("array.plist")
        try PropertyListSerialization.data(fromPropertyList: ["a"], format: .xml, options: 0).write(to: array)
        #expect(throws: InfoPlist.Failure(path: array.path, problem: "the top level must be a dictionary, found Array<Any>")) {
            try InfoPlist.load(path: array.path)
        }
    }
}
