public import Varlink

/// Why a command stopped before doing what was asked. `ProctorCTL.run` prints it on
/// standard error and turns it into the exit status.
public enum CommandFailure: Error, Sendable {
    /// The command line is wrong: printed with the synopsis and a pointer to `--help`; exit 2.
    case usage(UsageError)
    /// An input other than the command line is wrong (a policy file, a JSON payload): each
    /// line is printed as it is; exit 2.
    case invalidInput([String])
    /// proctord is not running at `address`, or the exchange with it failed (`reason`); exit 3.
    case daemonUnreachable(address: String, reason: String?)
    /// proctord answered with a Varlink error; exit 4.
    case daemonRefused(VarlinkError)

    public var exitStatus: ExitStatus {
        switch self {
        case .usage, .invalidInput: .invalidInput
        case .daemonUnreachable: .daemonUnreachable
        case .daemonRefused: .daemonRefused
        }
    }
}
