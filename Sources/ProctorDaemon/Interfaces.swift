/// The Varlink interface definitions the daemon serves, compiled in from `Interfaces/`.
enum Interfaces {
    struct Missing: Error, CustomStringConvertible {
        let name: String
        var description: String { "no interface file \(name).varlink was built into proctord" }
    }

    static func text(of name: String) throws(Missing) -> String {
        guard let text = EmbeddedInterfaces.texts[name] else { throw Missing(name: name) }
        return text
    }
}
