/// Where a command writes: its standard output and standard error. The executable hands in
/// the real streams; tests hand in buffers. Verbs never print any other way.
public struct Console: Sendable {
    private let writeOutput: @Sendable (String) -> Void
    private let writeError: @Sendable (String) -> Void

    public init(output: @escaping @Sendable (String) -> Void, error: @escaping @Sendable (String) -> Void) {
        self.writeOutput = output
        self.writeError = error
    }

    /// Writes `line` and a newline to standard output.
    public func print(_ line: String) { writeOutput(line + "\n") }

    /// Writes `line` and a newline to standard error.
    public func printError(_ line: String) { writeError(line + "\n") }
}
