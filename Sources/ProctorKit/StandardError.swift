import Foundation
import Glibc

/// The program's name as users see it in messages: the executable's file name.
let programName: String = {
    let path = CommandLine.arguments.first ?? "application"
    return path.split(separator: "/").last.map(String.init) ?? path
}()

/// Writes one line, prefixed with the program's name, to standard error.
func writeStandardErrorLine(_ message: String) {
    FileHandle.standardError.write(Data("\(programName): \(message)\n".utf8))
}

/// Ends the process the way `ApplicationMain` promises: one clear line, a distinct status.
func exit(_ message: String, status: ApplicationExitStatus) -> Never {
    writeStandardErrorLine(message)
    Glibc.exit(status.rawValue)
}
