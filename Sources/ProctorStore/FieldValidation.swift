import ProctorPolicy

/// Limits on caller-supplied text, so a client cannot make the store keep unbounded data.
enum FieldLimit {
    static let appID = 255
    /// A policy's `version`, as the policy language bounds it.
    static let policyVersion = PolicyLimits.maxVersionBytes
    static let feedbackKey = 100
    static let feedbackMessage = 1000
    static let feedbackData = 16 * 1024
    static let eventName = 100
    static let appVersion = 100
    static let wipeID = 100
    /// A queued notification's payload, as JSON text.
    static let notificationPayload = 64 * 1024
    /// A path (PATH_MAX).
    static let executable = 4096
    /// Canonical policy text: what the policy language allows a bundle (so a valid bundle is
    /// never refused here); the history keeps at most `historyLimit` of them.
    static let bundleBytes = PolicyLimits.maxDocumentBytes

    /// Throws `.invalidField` naming `field` unless `value` has 1…`maxCharacters` characters
    /// (0…`maxCharacters` when `allowEmpty`), counted as Unicode scalars: at most 4 bytes each,
    /// where one `Character` (a letter and any number of combining marks) has no bound at all.
    static func check(_ value: String, field: String, maxCharacters: Int, allowEmpty: Bool = false) throws(StoreError) {
        if value.isEmpty && !allowEmpty { throw .invalidField(field: field, reason: "must not be empty") }
        // The UTF-8 length bounds the scalar count from above: only count scalars when it could matter.
        if value.utf8.count > maxCharacters, case let count = value.unicodeScalars.count, count > maxCharacters {
            throw .invalidField(field: field, reason: "must be at most \(maxCharacters) characters, got \(count)")
        }
    }
}

/// A word from a closed set that a client sends (a feedback severity, an acknowledgement
/// status): `init(parsing:)` refuses any other with an error naming the field and the words allowed.
public protocol ClientWord: RawRepresentable<String>, CaseIterable {
    /// The request field the word comes in.
    static var field: String { get }
}

extension ClientWord {
    /// Parses a client-supplied word, naming the field and the words allowed when it is wrong.
    public init(parsing text: String) throws(StoreError) {
        guard let word = Self(rawValue: text) else {
            let words = Self.allCases.map { "\"\($0.rawValue)\"" }
            let expected = words.dropLast().joined(separator: ", ") + (words.count > 1 ? " or " : "") + (words.last ?? "")
            throw .invalidField(field: Self.field, reason: "expected \(expected), got \"\(text.prefix(40))\"")
        }
        self = word
    }
}
