/// proctorctl's exit statuses, which scripts may rely on.
public enum ExitStatus: Int32, Sendable, CaseIterable {
    /// The command did what was asked (a policy is valid; a decision allowed; no difference).
    case success = 0
    /// The question was answered "no": `check` found the action denied, `policy diff` found
    /// differences.
    case denied = 1
    /// Bad input or usage: an invalid policy, an unknown option, a missing argument.
    case invalidInput = 2
    /// proctord could not be reached: it is not running at the address, the connection was
    /// lost, or its reply made no sense.
    case daemonUnreachable = 3
    /// proctord refused the request: permission denied, a version conflict, an unknown app
    /// or version, an invalid policy, a storage failure.
    case daemonRefused = 4

    /// What the status means, for manuals.
    public var meaning: String {
        switch self {
        case .success: "success"
        case .denied: "denied or different"
        case .invalidInput: "bad input or usage"
        case .daemonUnreachable: "proctord not reachable"
        case .daemonRefused: "proctord refused the request"
        }
    }
}
