import Foundation
import Testing

/// What an outside package sees of ProctorKit: `import ProctorKit` must bring every type its
/// public API mentions. With InternalImportsByDefault the compiler lets a public declaration
/// mention only types of modules imported `public`, so re-exporting each of those suffices.
/// (Examples/NotesApp, built by `make test`, is the same check from outside.)
@Suite struct PublicAPITests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// Modules an app imports by itself: the toolchain's, not Proctor's.
    static let toolchainModules: Set<String> = ["Foundation", "Dispatch", "Glibc", "Synchronization"]

    static func publicImports(in target: String) throws -> (imported: Set<String>, exported: Set<String>) {
        let folder = root.appendingPathComponent("Sources/\(target)")
        var imported = Set<String>(), exported = Set<String>()
        let files = FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String } ?? []
        for file in files where file.hasSuffix(".swift") {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") {
                let words = line.split(separator: " ")
                guard let importWord = words.firstIndex(of: "import"), importWord + 1 < words.count,
                      words[..<importWord].contains("public") else { continue }
                let module = String(words[importWord + 1])
                imported.insert(module)
                if words.first == "@_exported" { exported.insert(module) }
            }
        }
        return (imported, exported)
    }

    /// The modules `import target` brings: those it re-exports, and theirs (ProctorKitTesting → ProctorKit → JSONCore).
    static func reexported(by target: String) throws -> Set<String> {
        var modules = try publicImports(in: target).exported
        for module in modules where FileManager.default.fileExists(atPath: root.appendingPathComponent("Sources/\(module)").path) {
            modules.formUnion(try reexported(by: module))
        }
        return modules
    }

    @Test(arguments: ["ProctorKit", "ProctorKitTesting"])
    func everyModuleInThePublicAPIIsReexported(target: String) throws {
        let imported = try Self.publicImports(in: target).imported
        let exported = try Self.reexported(by: target)
        #expect(!imported.isEmpty)
        #expect(imported.subtracting(Self.toolchainModules).subtracting(exported).isEmpty,
                "\(target) mentions these modules' types in its API without re-exporting them")
    }
}
