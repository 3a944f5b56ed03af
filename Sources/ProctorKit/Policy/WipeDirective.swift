/// An order to erase the app's managed data, handed to
/// `ApplicationDelegate.applicationShouldWipeData(_:directive:)` before ProctorKit removes the
/// directories the app declared (`ProctorDataDirectories` in its Info.plist).
public struct WipeDirective: Sendable, Hashable {
    /// Why the data goes.
    public enum Cause: Sendable, Hashable {
        /// The administrator ordered a wipe (`Admin.Wipe`); ProctorKit acknowledges it.
        case administrator
        /// The app was retired in policy: its managed data must not stay on the machine.
        case retired
        /// The app's version is below `compliance.minVersion` and `onViolation` is `wipe`
        /// (at launch, or while it runs when the minimum is raised): the data goes, then
        /// the app is blocked.
        case complianceViolation
        /// proctord has been unreachable for longer than `compliance.offlineWipeSeconds`
        /// (counted from the last view it signed): the data goes, then the app ends with
        /// `ApplicationExitStatus.agentUnavailable`.
        case offline
    }

    /// The directive's id (for `.administrator`); nil for the other causes.
    public let id: String?
    /// When the administrator issued it (RFC 3339, UTC); nil without an id.
    public let issuedAt: String?
    public let cause: Cause

    public init(id: String?, issuedAt: String?, cause: Cause) {
        self.id = id
        self.issuedAt = issuedAt
        self.cause = cause
    }
}
