/// proctorctl's exit statuses, which scripts may rely on.
public enum ExitStatus: Int32, Sendable, CaseIterable {
    /// The command did what was asked (a policy is valid; a decision allowed).
    case success = 0
    /// The question was answered "no" (`check`: the action is denied).
    case denied = 1
    /// Bad input or usage: an invalid policy, an unknown option, a missing argument.
    case invalidInput = 2

    /// What the status means, for manuals.
    public var meaning: String {
        switch self {
        case .success: "success"
        case .denied: "denied"
        case .invalidInput: "bad input or usage"
        }
    }
}
