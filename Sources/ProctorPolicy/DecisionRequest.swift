/// One question to the decision engine: may `app` perform `action`?
public struct DecisionRequest: Sendable, Hashable {
    /// The app asking.
    public var app: AppID
    public var action: Action
    /// The other party or the place: the destination app of `clipboard.copy`, the source app
    /// of `clipboard.paste`, the receiver of `share.send`, the sender of `share.receive`, the
    /// absolute path of `file.export`, what a `notification` shows (`NotificationContent`:
    /// `org` or `plain`). Nil means an app that is not known (so unmanaged) or, for
    /// `file.export` and `notification`, no target (denied).
    public var target: String?
    /// The number of characters of a `clipboard.copy`, checked against `charLimit`; nil means
    /// unknown, and an unknown size never fits a limit.
    public var size: Int?
    /// The version of the app at `launch`, checked against `compliance.minVersion`.
    public var appVersion: SemanticVersion?

    public init(app: AppID, action: Action, target: String? = nil, size: Int? = nil,
                appVersion: SemanticVersion? = nil) {
        self.app = app
        self.action = action
        self.target = target
        self.size = size
        self.appVersion = appVersion
    }
}
