import JSONCore

/// The sentences that explain the engine's decisions, one case each: a decision carries a
/// byte for its reason, and each sentence is written as JSON once (`json`), not escaped
/// again for every reply. What varies (the app, the target) is in the request and the rule.
enum DecisionReason: UInt8, CaseIterable, Sendable {
    case unknownApp, blocked, retired, sameApp, authorized, versionMeetsMinimum
    case belowMinimumBlock, belowMinimumWarn, belowMinimumWipe, noVersionBlock, noVersionWarn, noVersionWipe
    case clipboardBlocked, clipboardCharLimit
    case copyAny, copyManaged, copyOnlyManaged, copyManagedPasteIn, copyManagedPasteInOnlyManaged
    case pasteAny, pasteManagedPasteIn, pasteManaged, pasteOnlyManaged
    case sendNone, sendAny, sendManaged, sendOnlyManaged, receiveNone, receiveAny, receiveManaged, receiveOnlyManaged
    case exemptReceiver, exemptSender
    case printAllowed, printBlocked, screenCaptureAllowed, screenCaptureBlocked
    case notificationsAllow, notificationWithOrgData, notificationWithoutOrgData, notificationsBlock, notificationTargetUnknown
    case exportPathMissing, exportPathRelative, exportPathTooLong, exportDenied, exportAllowed, exportNotAllowed
    case exportNoAllowList

    /// The sentence.
    var text: String {
        switch self {
        case .unknownApp: "The app is not named in the policy, so every action is denied."
        case .blocked: "The app's state is blocked, so it may not run or handle data."
        case .retired: "The app's state is retired, so it may not run or handle data."
        case .sameApp: "Data moving within one app is always allowed."

        case .authorized: "The app is authorized to run."
        case .versionMeetsMinimum: "The app's version meets compliance.minVersion."
        case .belowMinimumBlock: "The app's version is below compliance.minVersion and onViolation is block."
        case .belowMinimumWarn: "The app's version is below compliance.minVersion; onViolation is warn, so it may run with a warning."
        case .belowMinimumWipe: "The app's version is below compliance.minVersion and onViolation is wipe, so its data must be wiped."
        case .noVersionBlock: "The app reported no version while compliance.minVersion is set, and onViolation is block."
        case .noVersionWarn: "The app reported no version while compliance.minVersion is set; onViolation is warn, so it may run with a warning."
        case .noVersionWipe: "The app reported no version while compliance.minVersion is set, and onViolation is wipe, so its data must be wiped."

        case .clipboardBlocked: "Clipboard level blocked lets nothing out of or into the app."
        case .clipboardCharLimit: "The copy is within clipboard.charLimit, which lets short copies go to any app."
        case .copyAny: "Clipboard level any allows copying to any app."
        case .copyManaged: "Clipboard level managed allows copying to managed apps."
        case .copyOnlyManaged: "Clipboard level managed allows copying only to managed apps, and the destination is not managed."
        case .copyManagedPasteIn: "Clipboard level managed-paste-in allows copying to managed apps."
        case .copyManagedPasteInOnlyManaged:
            "Clipboard level managed-paste-in allows copying only to managed apps, and the destination is not managed."
        case .pasteAny: "Clipboard level any allows pasting from any app."
        case .pasteManagedPasteIn: "Clipboard level managed-paste-in allows pasting from any app."
        case .pasteManaged: "Clipboard level managed allows pasting from managed apps."
        case .pasteOnlyManaged: "Clipboard level managed allows pasting only from managed apps, and the source is not managed."

        case .sendNone: "share.send is none, so nothing may be sent to other apps."
        case .sendAny: "share.send is any, so the app may send to any app."
        case .sendManaged: "share.send is managed and the receiver is a managed app."
        case .sendOnlyManaged: "share.send is managed and the receiver is neither managed nor exempt."
        case .receiveNone: "share.receive is none, so nothing may be received from other apps."
        case .receiveAny: "share.receive is any, so the app may receive from any app."
        case .receiveManaged: "share.receive is managed and the sender is a managed app."
        case .receiveOnlyManaged: "share.receive is managed and the sender is neither managed nor exempt."
        case .exemptReceiver: "share.send is managed and the receiver is exempt."
        case .exemptSender: "share.receive is managed and the sender is exempt."

        case .printAllowed: "Printing is allowed."
        case .printBlocked: "Printing is blocked."
        case .screenCaptureAllowed: "Screen capture is allowed."
        case .screenCaptureBlocked: "Screen capture is blocked."

        case .notificationsAllow: "notifications is allow, so the app may show any notification."
        case .notificationWithOrgData: "notifications is block-org-data, so a notification may not show organisation data."
        case .notificationWithoutOrgData: "notifications is block-org-data, and a notification without organisation data may be shown."
        case .notificationsBlock: "notifications is block, so the app may show no notification."
        case .notificationTargetUnknown:
            "notification needs the target org (it shows organisation data) or plain (it does not)."

        case .exportPathMissing: "file.export needs the absolute path of the destination, and none was given."
        case .exportPathRelative: "file.export needs an absolute path, and the path given is relative."
        case .exportPathTooLong: "The export path is longer than the 4096 bytes a Linux path may have."
        case .exportDenied: "The path matches a fileExport.deny pattern."
        case .exportAllowed: "The path matches a fileExport.allow pattern and no deny pattern."
        case .exportNotAllowed: "The path matches no fileExport.allow pattern."
        case .exportNoAllowList: "No fileExport.allow list applies and the path matches no deny pattern."
        }
    }

    /// The sentence as a JSON string, quotes included: escaped once, when a reply first
    /// needs a sentence (`Decision.writeAnswer(to:)`), into memory that lives as long as the
    /// process, so a view of it needs no closure and no retain.
    var json: UnsafeRawBufferPointer {
        let table = Self.jsonTable
        let start = rawValue == 0 ? 0 : table.ends[Int(rawValue) - 1]
        return UnsafeRawBufferPointer(rebasing: table.bytes[start..<table.ends[Int(rawValue)]])
    }

    /// Every sentence's JSON one after the other, and where each ends, at its raw value.
    private static let jsonTable = JSONTable()

    private struct JSONTable: @unchecked Sendable {
        /// Never freed, never written after `init`.
        let bytes: UnsafeRawBufferPointer
        let ends: [Int]

        init() {
            var all: [UInt8] = []
            var ends: [Int] = []
            for reason in DecisionReason.allCases {
                JSONValue.writeString(reason.text, to: &all)
                ends.append(all.count)
            }
            let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: all.count, alignment: 1)
            bytes.copyBytes(from: all)
            self.bytes = UnsafeRawBufferPointer(bytes)
            self.ends = ends
        }
    }

    static func versionBelowMinimum(_ violation: Violation, versionKnown: Bool) -> Self {
        switch (violation, versionKnown) {
        case (.block, true): .belowMinimumBlock
        case (.warn, true): .belowMinimumWarn
        case (.wipe, true): .belowMinimumWipe
        case (.block, false): .noVersionBlock
        case (.warn, false): .noVersionWarn
        case (.wipe, false): .noVersionWipe
        }
    }

    static func copy(_ level: ClipboardLevel, targetManaged: Bool) -> Self {
        switch (level, targetManaged) {
        case (.blocked, _): .clipboardBlocked
        case (.any, _): .copyAny
        case (.managed, true): .copyManaged
        case (.managed, false): .copyOnlyManaged
        case (.managedPasteIn, true): .copyManagedPasteIn
        case (.managedPasteIn, false): .copyManagedPasteInOnlyManaged
        }
    }

    static func paste(_ level: ClipboardLevel, sourceManaged: Bool) -> Self {
        switch (level, sourceManaged) {
        case (.blocked, _): .clipboardBlocked
        case (.any, _): .pasteAny
        case (.managedPasteIn, _): .pasteManagedPasteIn
        case (.managed, true): .pasteManaged
        case (.managed, false): .pasteOnlyManaged
        }
    }

    static func send(_ level: ShareLevel, receiverManaged: Bool) -> Self {
        switch (level, receiverManaged) {
        case (.none, _): .sendNone
        case (.any, _): .sendAny
        case (.managed, true): .sendManaged
        case (.managed, false): .sendOnlyManaged
        }
    }

    static func receive(_ level: ShareLevel, senderManaged: Bool) -> Self {
        switch (level, senderManaged) {
        case (.none, _): .receiveNone
        case (.any, _): .receiveAny
        case (.managed, true): .receiveManaged
        case (.managed, false): .receiveOnlyManaged
        }
    }

    static func print(_ toggle: Toggle) -> Self { toggle == .allow ? .printAllowed : .printBlocked }
    static func screenCapture(_ toggle: Toggle) -> Self { toggle == .allow ? .screenCaptureAllowed : .screenCaptureBlocked }

    static func notification(_ level: NotificationLevel, showsOrgData: Bool) -> Self {
        switch (level, showsOrgData) {
        case (.allow, _): .notificationsAllow
        case (.blockOrgData, true): .notificationWithOrgData
        case (.blockOrgData, false): .notificationWithoutOrgData
        case (.block, _): .notificationsBlock
        }
    }
}
