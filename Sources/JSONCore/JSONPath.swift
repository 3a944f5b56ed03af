/// Where a value sits in a document, rendered the way an administrator would type it:
/// `apps["com.example.notes"].dlp.clipboard.level`.
public struct JSONPath: Hashable, Sendable, CustomStringConvertible {
    public enum Component: Hashable, Sendable {
        case key(String)
        case index(Int)
    }

    public var components: [Component]

    public init(_ components: [Component] = []) { self.components = components }

    public static let root = JSONPath()

    public func appending(_ key: String) -> JSONPath { appending(component: .key(key)) }

    public func appending(index: Int) -> JSONPath { appending(component: .index(index)) }

    private func appending(component: Component) -> JSONPath {
        var extended = components
        extended.reserveCapacity(components.count + 1)
        extended.append(component)
        return JSONPath(extended)
    }

    public var parent: JSONPath? { components.isEmpty ? nil : JSONPath(Array(components.dropLast())) }

    public var lastKey: String? { if case .key(let k)? = components.last { k } else { nil } }

    /// `(document)` for the root; otherwise dotted identifiers and bracketed other keys.
    public var description: String {
        if components.isEmpty { return "(document)" }
        var out = ""
        for component in components {
            switch component {
            case .key(let key) where Self.isIdentifier(key):
                if !out.isEmpty { out += "." }
                out += key
            case .key(let key):
                out += "[" + JSONValue.string(key).serializedString() + "]"
            case .index(let index):
                out += "[\(index)]"
            }
        }
        return out
    }

    private static func isIdentifier(_ key: String) -> Bool {
        guard let first = key.utf8.first, first == UInt8(ascii: "_") || isLetter(first) else { return false }
        return key.utf8.allSatisfy { $0 == UInt8(ascii: "_") || isLetter($0) || (0x30...0x39).contains($0) }
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
}
