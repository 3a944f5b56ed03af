import Foundation
import Glibc
import Testing

/// What a run of the built `proctorctl` produced.
struct CommandResult: CustomStringConvertible {
    var status: Int32
    var output: String
    var error: String

    var outputLines: [String] { output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) }

    var description: String { "exit \(status)\n--- stdout\n\(output)--- stderr\n\(error)" }
}

/// Runs the built `proctorctl` binary, which sits beside the test bundle, and returns its
/// exit status and output. The environment is exactly `environment` plus a fixed time zone
/// (one hour east of UTC, so local times are checkable); `input` is its standard input.
func proctorctl(_ arguments: [String], environment: [String: String] = [:], input: String? = nil,
                sourceLocation: Testing.SourceLocation = #_sourceLocation) throws -> CommandResult {
    let process = Process()
    process.executableURL = binaryDirectory.appendingPathComponent("proctorctl")
    process.arguments = arguments
    process.environment = ["TZ": "XYZ-1", "PATH": "/usr/bin:/bin"].merging(environment) { _, given in given }
    process.currentDirectoryURL = repositoryRoot
    let output = Pipe()
    let error = Pipe()
    let standardInput = Pipe()
    process.standardOutput = output
    process.standardError = error
    process.standardInput = standardInput
    try process.run()
    // Read both streams while the process runs, so a full pipe cannot stall it.
    let reads = DispatchGroup()
    nonisolated(unsafe) var outputData = Data()
    nonisolated(unsafe) var errorData = Data()
    DispatchQueue.global().async(group: reads) { outputData = output.fileHandleForReading.readDataToEndOfFile() }
    DispatchQueue.global().async(group: reads) { errorData = error.fileHandleForReading.readDataToEndOfFile() }
    if let input { standardInput.fileHandleForWriting.write(Data(input.utf8)) }
    try standardInput.fileHandleForWriting.close()
    let finished = DispatchSemaphore(value: 0)
    DispatchQueue.global().async { process.waitUntilExit(); finished.signal() }
    if finished.wait(timeout: .now() + 30) == .timedOut {
        process.terminate()
        Issue.record("proctorctl \(arguments.joined(separator: " ")) ran for more than 30 s", sourceLocation: sourceLocation)
        finished.wait()
    }
    reads.wait()
    return CommandResult(status: process.terminationStatus, output: String(decoding: outputData, as: UTF8.self),
                         error: String(decoding: errorData, as: UTF8.self))
}

/// The folder of the test bundle, where SwiftPM also puts the `proctorctl` executable.
let binaryDirectory: URL = {
    let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
    // Linux runs `X.xctest` itself; should it be a bundle folder, step out of it.
    while directory.pathExtension == "xctest" || directory.lastPathComponent == "MacOS" || directory.lastPathComponent == "Contents" {
        directory.deleteLastPathComponent()
    }
    return directory
}()

/// The checkout this file belongs to: `config/` and the interface files are read from it.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

