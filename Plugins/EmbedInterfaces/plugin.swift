import Foundation
import PackagePlugin

/// Compiles a target's `Interfaces/*.varlink` files into a Swift dictionary, so the
/// interface files stay the single source of the Varlink contract and the daemon carries
/// them inside its binary (no resource bundle to lose on `make install`).
@main
struct EmbedInterfaces: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let directory = target.directoryURL.appending(path: "Interfaces")
        let inputs = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "varlink" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedInterfaces.swift")
        return [.buildCommand(displayName: "Embedding Varlink interfaces of \(target.name)",
                              executable: try context.tool(named: "embed-text").url,
                              arguments: [output.path] + inputs.map(\.path),
                              inputFiles: inputs, outputFiles: [output])]
    }
}
