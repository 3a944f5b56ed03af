/// What a command may use besides its arguments: where to write, and the environment it
/// runs in (for `PROCTOR_ADMIN_SOCKET`).
public struct CommandContext: Sendable {
    public var console: Console
    public var environment: [String: String]

    public init(console: Console, environment: [String: String]) {
        self.console = console
        self.environment = environment
    }
}
