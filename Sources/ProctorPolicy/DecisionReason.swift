/// The sentences that explain decisions. They are constants, so a decision costs no string
/// building; what varies (the app, the target) is in the request and the rule path.
enum DecisionReason {
    static let unknownApp = "The app is not named in the policy, so every action is denied."
    static let blocked = "The app's state is blocked, so it may not run or handle data."
    static let retired = "The app's state is retired, so it may not run or handle data."
    static let sameApp = "Data moving within one app is always allowed."

    static let authorized = "The app is authorized to run."
    static let versionMeetsMinimum = "The app's version meets compliance.minVersion."
    static func versionBelowMinimum(_ violation: Violation, versionKnown: Bool) -> String {
        switch (violation, versionKnown) {
        case (.block, true): "The app's version is below compliance.minVersion and onViolation is block."
        case (.warn, true): "The app's version is below compliance.minVersion; onViolation is warn, so it may run with a warning."
        case (.wipe, true): "The app's version is below compliance.minVersion and onViolation is wipe, so its data must be wiped."
        case (.block, false): "The app reported no version while compliance.minVersion is set, and onViolation is block."
        case (.warn, false): "The app reported no version while compliance.minVersion is set; onViolation is warn, so it may run with a warning."
        case (.wipe, false): "The app reported no version while compliance.minVersion is set, and onViolation is wipe, so its data must be wiped."
        }
    }

    static let clipboardBlocked = "Clipboard level blocked lets nothing out of or into the app."
    static let clipboardCharLimit = "The copy is within clipboard.charLimit, which lets short copies go to any app."
    static func copy(_ level: ClipboardLevel, targetManaged: Bool) -> String {
        switch (level, targetManaged) {
        case (.blocked, _): clipboardBlocked
        case (.any, _): "Clipboard level any allows copying to any app."
        case (.managed, true): "Clipboard level managed allows copying to managed apps."
        case (.managed, false): "Clipboard level managed allows copying only to managed apps, and the destination is not managed."
        case (.managedPasteIn, true): "Clipboard level managed-paste-in allows copying to managed apps."
        case (.managedPasteIn, false): "Clipboard level managed-paste-in allows copying only to managed apps, and the destination is not managed."
        }
    }
    static func paste(_ level: ClipboardLevel, sourceManaged: Bool) -> String {
        switch (level, sourceManaged) {
        case (.blocked, _): clipboardBlocked
        case (.any, _): "Clipboard level any allows pasting from any app."
        case (.managedPasteIn, _): "Clipboard level managed-paste-in allows pasting from any app."
        case (.managed, true): "Clipboard level managed allows pasting from managed apps."
        case (.managed, false): "Clipboard level managed allows pasting only from managed apps, and the source is not managed."
        }
    }

    static func send(_ level: ShareLevel, receiverManaged: Bool) -> String {
        switch (level, receiverManaged) {
        case (.none, _): "share.send is none, so nothing may be sent to other apps."
        case (.any, _): "share.send is any, so the app may send to any app."
        case (.managed, true): "share.send is managed and the receiver is a managed app."
        case (.managed, false): "share.send is managed and the receiver is neither managed nor exempt."
        }
    }
    static func receive(_ level: ShareLevel, senderManaged: Bool) -> String {
        switch (level, senderManaged) {
        case (.none, _): "share.receive is none, so nothing may be received from other apps."
        case (.any, _): "share.receive is any, so the app may receive from any app."
        case (.managed, true): "share.receive is managed and the sender is a managed app."
        case (.managed, false): "share.receive is managed and the sender is neither managed nor exempt."
        }
    }
    static let exemptReceiver = "share.send is managed and the receiver is exempt."
    static let exemptSender = "share.receive is managed and the sender is exempt."

    static func print(_ toggle: Toggle) -> String {
        toggle == .allow ? "Printing is allowed." : "Printing is blocked."
    }
    static func screenCapture(_ toggle: Toggle) -> String {
        toggle == .allow ? "Screen capture is allowed." : "Screen capture is blocked."
    }

    static func notification(_ level: NotificationLevel, showsOrgData: Bool) -> String {
        switch (level, showsOrgData) {
        case (.allow, _): "notifications is allow, so the app may show any notification."
        case (.blockOrgData, true): "notifications is block-org-data, so a notification may not show organisation data."
        case (.blockOrgData, false): "notifications is block-org-data, and a notification without organisation data may be shown."
        case (.block, _): "notifications is block, so the app may show no notification."
        }
    }
    static let notificationTargetUnknown = "notification needs the target org (it shows organisation data) or plain (it does not)."

    static let exportPathMissing = "file.export needs the absolute path of the destination, and none was given."
    static let exportPathRelative = "file.export needs an absolute path, and the path given is relative."
    static let exportPathTooLong = "The export path is longer than the 4096 bytes a Linux path may have."
    static let exportDenied = "The path matches a fileExport.deny pattern."
    static let exportAllowed = "The path matches a fileExport.allow pattern and no deny pattern."
    static let exportNotAllowed = "The path matches no fileExport.allow pattern."
    static let exportNoAllowList = "No fileExport.allow list applies and the path matches no deny pattern."
}
