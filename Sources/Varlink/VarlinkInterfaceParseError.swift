/// Why a Varlink interface definition was rejected, and where (1-based line and column).
public struct VarlinkInterfaceParseError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public var line: Int
    public var column: Int

    public init(message: String, line: Int, column: Int) {
        self.message = message
        self.line = line
        self.column = column
    }

    public var description: String { "line \(line), column \(column): \(message)" }
}
