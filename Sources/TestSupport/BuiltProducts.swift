public import Foundation

/// Finds the package's built executables from inside a test.
///
/// SwiftPM puts the test bundle (`<Package>PackageTests.xctest`) in the same bin folder as
/// every executable product, so the folder of the running test binary is the bin path.
/// `PROCTOR_TEST_BIN_PATH` overrides it (e.g. to test an installed build).
public enum BuiltProducts {
    /// The folder holding the built executables.
    public static var binPath: URL {
        if let override = ProcessInfo.processInfo.environment["PROCTOR_TEST_BIN_PATH"], !override.isEmpty {
            return URL(fileURLWithPath: override, isDirectory: true)
        }
        let testBinary = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        var folder = URL(fileURLWithPath: testBinary).deletingLastPathComponent()
        // On platforms where the .xctest is a bundle folder, step out of it.
        while folder.path.contains(".xctest") { folder.deleteLastPathComponent() }
        return folder
    }

    /// The path of the executable product `name`; throws when it has not been built.
    public static func executable(_ name: String) throws -> URL {
        let url = binPath.appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw TestSupportError("executable '\(name)' not found in \(binPath.path): build it first (swift build --build-tests builds every product)")
        }
        return url
    }
}
