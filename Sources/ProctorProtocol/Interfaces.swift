/// The Varlink interface definitions of the protocol, compiled in from `Interfaces/` (the
/// EmbedInterfaces build plugin): proctord serves them, and tests check the message types
/// against them.
public enum ProtocolInterfaces {
    /// An interface file that was not built in.
    public struct Missing: Error, CustomStringConvertible {
        public let name: String
        public var description: String { "no interface file \(name).varlink was built into ProctorProtocol" }
    }

    /// The names of the built-in interfaces (`io.proctor.Admin`, `io.proctor.Agent`).
    public static var names: [String] { EmbeddedInterfaces.texts.keys.sorted() }

    /// The text of the interface `name`.
    public static func text(of name: String) throws(Missing) -> String {
        guard let text = EmbeddedInterfaces.texts[name] else { throw Missing(name: name) }
        return text
    }
}
