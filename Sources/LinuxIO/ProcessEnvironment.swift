import Glibc

/// The process environment as a dictionary, without Foundation, read as `getenv` reads it:
/// each entry is split at its first "=" byte ("=" before a combining mark is one `Character`,
/// which is not "="), and of duplicate names the first wins.
/// - Parameter entries: a NULL-terminated array of `NAME=value` strings; nil for the
///   process's own (`environ`).
public func processEnvironment(_ entries: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = nil) -> [String: String] {
    var variables: [String: String] = [:]
    var entry = entries ?? environ
    while let pointer = entry.pointee {
        let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: strlen(pointer))
        if let equals = bytes.firstIndex(of: UInt8(ascii: "=")) {
            let name = String(decoding: bytes[..<equals], as: UTF8.self)
            if variables[name] == nil { variables[name] = String(decoding: bytes[(equals + 1)...], as: UTF8.self) }
        }
        entry += 1
    }
    return variables
}
