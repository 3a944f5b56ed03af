/// The exit statuses `ApplicationMain` uses, distinct so scripts and unit files can tell
/// the causes apart. 0 is a clean termination (SIGTERM or SIGINT).
public struct ApplicationExitStatus: RawRepresentable, Hashable, Sendable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The delegate's `application(_:didFinishLaunchingWithOptions:)` returned false.
    public static let launchDeclined = ApplicationExitStatus(rawValue: 70)
    /// The application class refused the launch (`Application.LaunchDecision.refuse`) without
    /// choosing a status of its own.
    public static let launchRefused = ApplicationExitStatus(rawValue: 71)
    /// A principal or delegate class name names no class.
    public static let classNotFound = ApplicationExitStatus(rawValue: 72)
    /// The principal class name names a class that is not `Application` or a subclass.
    public static let notAnApplicationClass = ApplicationExitStatus(rawValue: 73)
    /// The delegate class name names a class that does not conform to `ApplicationDelegate`.
    public static let notADelegateClass = ApplicationExitStatus(rawValue: 74)
    /// The Info.plist in use could not be read or is not a dictionary of the expected shape.
    public static let invalidInfoPlist = ApplicationExitStatus(rawValue: 75)
    /// The process could not take ownership of its lifecycle signals.
    public static let setupFailed = ApplicationExitStatus(rawValue: 76)
    /// `PolicyApplication`: proctord does not let the app run (blocked, retired, a denied
    /// launch, or no registration at all).
    public static let blockedByPolicy = ApplicationExitStatus(rawValue: 77)
    /// `PolicyApplication`: proctord could not be reached and no valid cached view allows an
    /// offline launch (none, tampered, for another app or user, or older than the offline
    /// grace), or the app wiped its data after `compliance.offlineWipeSeconds` offline.
    /// `EX_UNAVAILABLE`.
    public static let agentUnavailable = ApplicationExitStatus(rawValue: 69)
}
