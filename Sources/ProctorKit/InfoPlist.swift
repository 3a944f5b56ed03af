import Foundation

/// An application's Info.plist: where `ApplicationMain` looks for it, and what it holds.
///
/// Lookup order (the first that applies wins):
/// 1. `$PROCTOR_INFO_PLIST`, when set and not empty — the file must then exist;
/// 2. `Info.plist` beside the executable (`/proc/self/exe`, symlinks resolved);
/// 3. `PREFIX/share/<executable name>/Info.plist`, PREFIX being the executable folder's
///    parent (`/usr/bin/notes` → `/usr/share/notes/Info.plist`).
/// No file at 2 or 3 means no Info.plist, which is fine: the dictionary is empty.
struct InfoPlist {
    /// The environment variable that names an Info.plist explicitly.
    static let environmentVariable = "PROCTOR_INFO_PLIST"
    /// The largest Info.plist read; anything bigger is not an Info.plist.
    static let maximumSize = 1 << 20

    /// A problem with the Info.plist in use, naming the file.
    struct Failure: Error, CustomStringConvertible, Equatable {
        let path: String
        let problem: String
        var description: String { "Info.plist \(path): \(problem)" }
    }

    let path: String
    let dictionary: [String: Any]

    /// The value of `NSPrincipalClass`: nil when absent, an error when not a non-empty string.
    func principalClassName() throws(Failure) -> String? {
        guard let value = dictionary["NSPrincipalClass"] else { return nil }
        guard let name = value as? String, !name.isEmpty else {
            throw Failure(path: path, problem: "NSPrincipalClass must be a non-empty string, found \(type(of: value))")
        }
        return name
    }

    /// The paths to try, in order, with whether the file must exist.
    static func candidates(environment: [String: String], executablePath: String) -> [(path: String, required: Bool)] {
        if let explicit = environment[environmentVariable], !explicit.isEmpty {
            return [(explicit, true)]
        }
        let executable = URL(fileURLWithPath: executablePath)
        let folder = executable.deletingLastPathComponent()
        let prefix = folder.deletingLastPathComponent()
        let shared = prefix.appendingPathComponent("share")
            .appendingPathComponent(executable.lastPathComponent)
            .appendingPathComponent("Info.plist")
        return [(folder.appendingPathComponent("Info.plist").path, false), (shared.path, false)]
    }

    /// Finds and reads the Info.plist; nil when there is none.
    static func locate(environment: [String: String] = ProcessInfo.processInfo.environment,
                       executablePath: String = executablePath()) throws(Failure) -> InfoPlist? {
        for candidate in candidates(environment: environment, executablePath: executablePath) {
            if !candidate.required && !FileManager.default.fileExists(atPath: candidate.path) { continue }
            return try load(path: candidate.path)
        }
        return nil
    }

    /// Reads an XML or binary property list whose top level is a dictionary.
    static func load(path: String) throws(Failure) -> InfoPlist {
        let data: Data
        do {
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            data = try handle.read(upToCount: maximumSize + 1) ?? Data()
        } catch {
            throw Failure(path: path, problem: "cannot be read (\(describe(error)))")
        }
        return try parse(data, path: path)
    }

    /// Reads the bytes of an XML or binary property list whose top level is a dictionary;
    /// `path` names the file in errors.
    static func parse(_ data: Data, path: String) throws(Failure) -> InfoPlist {
        guard data.count <= maximumSize else {
            throw Failure(path: path, problem: "larger than \(maximumSize) bytes")
        }
        if binaryPropertyListHoldsASet(data) {
            throw Failure(path: path, problem: "a binary property list with a set in it (an Info.plist has no use for sets)")
        }
        let root: Any
        do {
            root = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            throw Failure(path: path, problem: "not a property list (\(describe(error)))")
        }
        guard let dictionary = root as? [String: Any] else {
            throw Failure(path: path, problem: "the top level must be a dictionary, found \(type(of: root))")
        }
        return InfoPlist(path: path, dictionary: dictionary)
    }

    /// Whether `data` is a binary property list that lists a set among its objects.
    /// Foundation on Linux (swift-corelibs-foundation, Swift 6.3) crashes the process
    /// bridging a non-empty set out of a binary plist, so such a file is refused before it
    /// gets there (found by Fuzz/InfoPlistFuzz.swift). Checks every object the offset table
    /// lists; a trailer that does not add up is left to Foundation, which refuses it.
    static func binaryPropertyListHoldsASet(_ data: Data) -> Bool {
        let bytes = [UInt8](data)
        // "bplist" + 2 version bytes, at least one object, the 32-byte trailer.
        guard bytes.count >= 41, bytes.starts(with: Array("bplist".utf8)) else { return false }
        let trailer = bytes.count - 32
        func bigEndian(_ slice: ArraySlice<UInt8>) -> UInt64 { slice.reduce(0) { $0 << 8 | UInt64($1) } }
        let offsetSize = Int(bytes[trailer + 6])
        let objectCount = bigEndian(bytes[trailer + 8 ..< trailer + 16])
        let tableStart = bigEndian(bytes[trailer + 24 ..< trailer + 32])
        guard (1...8).contains(offsetSize), objectCount <= UInt64(trailer), tableStart <= UInt64(trailer),
              Int(tableStart) + Int(objectCount) * offsetSize <= trailer else { return false }
        for entry in 0..<Int(objectCount) {
            let start = Int(tableStart) + entry * offsetSize
            let offset = bigEndian(bytes[start ..< start + offsetSize])
            // An object's marker byte: 0xC_ is a set of _ objects (0xCF: the count follows).
            if offset < UInt64(trailer), bytes[Int(offset)] >> 4 == 0xC { return true }
        }
        return false
    }

    /// The running executable's real path.
    static func executablePath() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments.first ?? ""
    }

    private static func describe(_ error: any Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError,
           underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        if nsError.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(nsError.code))) }
        return nsError.localizedDescription
    }
}
