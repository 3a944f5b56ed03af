import Foundation
import PackagePlugin

/// Compiles a target's `Interfaces/*.varlink` files into Swift, so the interface files stay
/// the single source of the Varlink contract: `embed-text` makes them a string table (the
/// daemon carries them inside its binary, no resource bundle to lose on `make install`), and
/// `generate-messages` makes a message type per type and per method's parameters and reply,
/// with `Interfaces/SwiftMapping.txt` for what the interface text cannot say.
@main
struct EmbedInterfaces: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let directory = target.directoryURL.appending(path: "Interfaces")
        let inputs = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "varlink" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let mapping = directory.appending(path: "SwiftMapping.txt")
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedInterfaces.swift")
        let messages = context.pluginWorkDirectoryURL.appending(path: "Messages")
        let messageFiles = inputs.map { messages.appending(path: $0.deletingPathExtension().lastPathComponent + ".swift") }
        try FileManager.default.createDirectory(at: messages, withIntermediateDirectories: true)
        return [
            .buildCommand(displayName: "Embedding Varlink interfaces of \(target.name)",
                          executable: try context.tool(named: "embed-text").url,
                          arguments: [output.path] + inputs.map(\.path),
                          inputFiles: inputs, outputFiles: [output]),
            .buildCommand(displayName: "Generating the message types of \(target.name)",
                          executable: try context.tool(named: "generate-messages").url,
                          arguments: [mapping.path, messages.path] + inputs.map(\.path),
                          inputFiles: [mapping] + inputs, outputFiles: messageFiles),
        ]
    }
}
