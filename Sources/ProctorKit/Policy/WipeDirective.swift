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
    }

    /// The directive's id (for `.administrator`); nil for a retirement.
    public let id: String?
    /// When the administrator issued it (RFC 3339, UTC), nil for a retirement.
    public let issuedAt: String?
    public let cause: Cause

    public init(id: String?, issuedAt: String?, cause: Cause) {
        self.id = id
        self.issuedAt = issuedAt
        self.cause = cause
    }
}
