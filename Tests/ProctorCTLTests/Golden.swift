import Foundation
import Testing

/// proctorctl's readable output compared with a file under `Tests/ProctorCTLTests/golden/`,
/// so a change of the output shows as a diff of that file. After a deliberate change,
/// regenerate the files and review the diff:
///
///     PROCTOR_UPDATE_GOLDEN=1 swift test --filter ProctorCTLTests
enum Golden {
    static let folder = repositoryRoot.appendingPathComponent("Tests/ProctorCTLTests/golden")
    static let updateVariable = "PROCTOR_UPDATE_GOLDEN"

    /// Expects `output` to equal `golden/NAME.txt`, with each key of `placeholders` (a
    /// temporary path, say) written as its value; writes the file instead when
    /// `PROCTOR_UPDATE_GOLDEN=1`.
    static func check(_ output: String, _ name: String, placeholders: [String: String] = [:],
                      sourceLocation: SourceLocation = #_sourceLocation) throws {
        var text = output
        for (actual, placeholder) in placeholders { text = text.replacingOccurrences(of: actual, with: placeholder) }
        let file = folder.appendingPathComponent(name + ".txt")
        if ProcessInfo.processInfo.environment[updateVariable] == "1" {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: file, options: .atomic)
            return
        }
        guard let expected = try? String(contentsOf: file, encoding: .utf8) else {
            Issue.record("no golden file \(file.path); create it with \(updateVariable)=1 swift test --filter ProctorCTLTests",
                         sourceLocation: sourceLocation)
            return
        }
        #expect(text == expected, "proctorctl's output differs from golden/\(name).txt", sourceLocation: sourceLocation)
    }
}
