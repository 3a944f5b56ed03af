public import JSONCore

/// A policy version proctord sent the app, as `ApplicationDelegate.application(_:didReceivePolicyChange:)`
/// sees it: once per version, at launch (before didFinishLaunching) and on every change.
public struct PolicyChange: Sendable, Hashable {
    /// The policy version (the policy's `version`).
    public let version: String
    /// The app's managed configuration under that version (what `ManagedConfiguration.shared` holds).
    public let configuration: [String: JSONValue]

    public init(version: String, configuration: [String: JSONValue]) {
        self.version = version
        self.configuration = configuration
    }
}

/// What the app did with a policy version, sent to proctord (`ReportFeedback` key `policy`)
/// and shown by `proctorctl app ID` — AppConnect's applied / error / unsupported.
public enum PolicyAcknowledgement: Sendable, Hashable {
    /// The app runs under the version.
    case applied
    /// The app could not apply it; `reason` is for the administrator.
    case error(reason: String)
    /// The version asks for something this app does not support; `reason` names it.
    case unsupported(reason: String)

    /// The `result` proctord stores.
    var result: String {
        switch self {
        case .applied: "applied"
        case .error: "error"
        case .unsupported: "unsupported"
        }
    }
}
