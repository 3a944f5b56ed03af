/// The settings in force when neither an app entry nor `defaults` says otherwise.
///
/// They follow what MDM administrators expect of an app that merely enrolled: organisation
/// data stays among managed apps (clipboard and sharing `managed`), printing, screen capture
/// and notifications are not restricted, files may be exported anywhere, and an app below
/// its minimum version is blocked. A decision that rests on one of these names it with
/// `builtin.<name>` (for example `builtin.clipboard.level`), as listed per member.
public enum BuiltinDefaults {
    /// `builtin.clipboard.level`
    public static let clipboardLevel = ClipboardLevel.managed
    /// `builtin.clipboard.charLimit`: no allowance for short copies.
    public static let clipboardCharLimit = 0
    /// `builtin.share.send`
    public static let shareSend = ShareLevel.managed
    /// `builtin.share.receive`
    public static let shareReceive = ShareLevel.managed
    /// `builtin.share.exempt`: no exempt apps.
    public static let shareExempt: [String] = []
    /// `builtin.print`
    public static let print = Toggle.allow
    /// `builtin.screenCapture`
    public static let screenCapture = Toggle.allow
    /// `builtin.fileExport.allow`: no allow list, so any path not denied may be exported.
    public static let fileExportAllow: [String]? = nil
    /// `builtin.fileExport.deny`: nothing denied.
    public static let fileExportDeny: [String] = []
    /// `builtin.fileExport.enforcement`: the app asks `DataGuard`; the kernel does not confine it.
    public static let fileExportEnforcement = ExportEnforcement.advisory
    /// `builtin.notifications`
    public static let notifications = NotificationLevel.allow
    /// `builtin.minVersion`: no minimum.
    public static let minVersion: SemanticVersion? = nil
    /// `builtin.onViolation`
    public static let onViolation = Violation.block
    /// `builtin.offlineGraceSeconds`: one day without proctord before data actions stop.
    public static let offlineGraceSeconds = 86_400
    /// `builtin.offlineWipeSeconds`: no wipe for being offline.
    public static let offlineWipeSeconds: Int? = nil

    /// The rule names of the built-in defaults and of the engine's own fixed rules.
    public enum Rule {
        public static let clipboardLevel = "builtin.clipboard.level"
        public static let clipboardCharLimit = "builtin.clipboard.charLimit"
        public static let shareSend = "builtin.share.send"
        public static let shareReceive = "builtin.share.receive"
        public static let shareExempt = "builtin.share.exempt"
        public static let print = "builtin.print"
        public static let screenCapture = "builtin.screenCapture"
        public static let fileExportAllow = "builtin.fileExport.allow"
        public static let fileExportDeny = "builtin.fileExport.deny"
        public static let fileExportEnforcement = "builtin.fileExport.enforcement"
        public static let notifications = "builtin.notifications"
        public static let minVersion = "builtin.minVersion"
        public static let onViolation = "builtin.onViolation"
        public static let offlineGraceSeconds = "builtin.offlineGraceSeconds"
        public static let offlineWipeSeconds = "builtin.offlineWipeSeconds"
        /// Every action of an app that the policy does not name is denied.
        public static let unknownApp = "builtin.unknownApp"
        /// Data moving within one app is always allowed.
        public static let sameApp = "builtin.sameApp"
        /// `file.export` takes an absolute path only.
        public static let fileExportRelativePath = "builtin.fileExport.relativePath"
        /// `file.export` refuses paths longer than `CompiledPolicy.maxExportPathBytes`.
        public static let fileExportPathTooLong = "builtin.fileExport.pathTooLong"
        /// `notification` takes the target `org` or `plain` only.
        public static let notificationTarget = "builtin.notification.target"
    }
}
