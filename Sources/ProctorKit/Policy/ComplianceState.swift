public import ProctorPolicy

/// Whether the app meets its compliance rules (`compliance.minVersion`), as proctord last
/// decided for the version it registered with. proctord decides again on every policy
/// change and pushes the answer; `PolicyApplication.compliance` holds it and
/// `ApplicationDelegate.application(_:complianceDidChange:)` hears every change.
public enum ComplianceState: Sendable, Hashable {
    /// The version meets the minimum, or there is none.
    case compliant
    /// The version is below the minimum and `onViolation` is `warn`: the app keeps running;
    /// tell the user to update. `reason` is proctord's sentence.
    case warning(reason: String)
    /// The version is below the minimum and `onViolation` is `block` or `wipe`: the app is
    /// stopped (after its managed data is wiped, for `wipe`).
    case violation(reason: String)

    /// The state a `launch` decision describes.
    init(_ launch: Decision) {
        switch launch.violation {
        case nil: self = .compliant
        case .warn?: self = .warning(reason: launch.reason)
        case .block?, .wipe?: self = .violation(reason: launch.reason)
        }
    }
}
