import Foundation

/// Where a class name given to `ApplicationMain` came from, for messages that point at it.
enum ClassNameOrigin: Equatable, CustomStringConvertible {
    /// An argument of `ApplicationMain`, by its parameter name.
    case argument(String)
    /// `NSPrincipalClass` in the Info.plist at this path.
    case infoPlist(path: String)

    var description: String {
        switch self {
        case .argument(let parameter): "from the \(parameter) argument of ApplicationMain"
        case .infoPlist(let path): "from NSPrincipalClass in \(path)"
        }
    }
}

/// Resolves class names at run time with `NSClassFromString`.
///
/// On Linux only module-qualified names (`Module.Class`) resolve, so an unqualified name is
/// qualified with each module in `modules`, in order: the module that called
/// `ApplicationMain`, the executable's own module (its file name with characters that cannot
/// start or continue a Swift identifier replaced by `_`, as SwiftPM names modules), and
/// ProctorKit. A qualified name is tried as written.
struct ClassResolver {
    let modules: [String]

    init(modules: [String]) {
        var unique: [String] = []
        for module in modules where !module.isEmpty && !unique.contains(module) { unique.append(module) }
        self.modules = unique
    }

    /// The modules for a call of `ApplicationMain` from the file `fileID` (`Module/File.swift`)
    /// in the executable at `executablePath`.
    init(callerFileID: String, executablePath: String) {
        let callerModule = callerFileID.split(separator: "/").first.map(String.init) ?? ""
        let executableName = URL(fileURLWithPath: executablePath).lastPathComponent
        self.init(modules: [callerModule, Self.moduleName(forExecutable: executableName), "ProctorKit"])
    }

    /// The names to try for `name`, in order; empty when `name` is not a valid class name
    /// (`Class` or `Module.Class`: `NSClassFromString` on Linux does not find nested classes).
    func candidates(for name: String) -> [String] {
        let components = name.split(separator: ".", omittingEmptySubsequences: false)
        guard components.count <= 2, components.allSatisfy(Self.isIdentifier) else { return [] }
        return components.count > 1 ? [name] : modules.map { "\($0).\(name)" }
    }

    /// The first class found among `candidates(for: name)`.
    func resolve(_ name: String) -> AnyClass? {
        for candidate in candidates(for: name) {
            if let found = NSClassFromString(candidate) { return found }
        }
        return nil
    }

    /// SwiftPM's module name for an executable target's product name (`my-app` → `my_app`).
    static func moduleName(forExecutable name: String) -> String {
        var result = String(name.unicodeScalars.map { isIdentifierCharacter($0) ? Character($0) : "_" })
        if let first = result.unicodeScalars.first, ("0"..."9").contains(first) { result = "_" + result }
        return result
    }

    private static func isIdentifier(_ text: Substring) -> Bool {
        guard let first = text.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
        return text.unicodeScalars.allSatisfy(isIdentifierCharacter)
    }

    private static func isIdentifierCharacter(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "_"
    }
}
