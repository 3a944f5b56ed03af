// generate-messages MAPPING OUTPUT-DIRECTORY INTERFACE.varlink...: writes, for each
// interface file, OUTPUT-DIRECTORY/<its name>.swift holding its message types (see
// MessageGenerator and the mapping file's header). Used by the EmbedInterfaces build plugin
// and Fuzz/build.sh. On a file it cannot map it prints `file:line: error: …` and exits 1.
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: generate-messages MAPPING OUTPUT-DIRECTORY INTERFACE.varlink...\n".utf8))
    exit(2)
}

func read(_ path: String) -> String {
    do {
        return try String(contentsOfFile: path, encoding: .utf8)
    } catch {
        FileHandle.standardError.write(Data("generate-messages: cannot read \(path): \(error)\n".utf8))
        exit(1)
    }
}

do throws(GenerationError) {
    let mapping = try SwiftMapping(path: arguments[0], text: read(arguments[0]))
    var mapped: Set<String> = []
    for path in arguments[2...] {
        let interface = try InterfaceFile(path: path, text: read(path))
        guard let interfaceMapping = mapping.interfaces[interface.name] else {
            throw GenerationError(path: path, line: 1, message: "\(mapping.path) has no `interface \(interface.name) SWIFT-NAMESPACE METHOD-PROTOCOL` line; expected one for every interface file")
        }
        mapped.insert(interface.name)
        let source = try MessageGenerator(interface: interface, mapping: interfaceMapping, mappingPath: mapping.path,
                                          imports: mapping.imports).swiftSource()
        let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        let output = URL(fileURLWithPath: arguments[1]).appendingPathComponent("\(name).swift")
        do {
            try source.write(to: output, atomically: true, encoding: .utf8)
        } catch {
            FileHandle.standardError.write(Data("generate-messages: cannot write \(output.path): \(error)\n".utf8))
            exit(1)
        }
    }
    for (name, interface) in mapping.interfaces where !mapped.contains(name) {
        throw GenerationError(path: mapping.path, line: interface.line, message: "no interface file for \(name) was given; expected \(name).varlink")
    }
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
