/// Limits on caller-supplied text, so a client cannot make the store keep unbounded data.
enum FieldLimit {
    static let appID = 255
    static let policyVersion = 100
    static let feedbackKey = 100
    static let feedbackMessage = 1000
    static let feedbackData = 16 * 1024
    static let eventName = 100
    static let appVersion = 100
    static let wipeID = 100
    /// A path (PATH_MAX).
    static let executable = 4096
    /// Canonical policy text; larger than any real policy, small enough for the history to stay small.
    static let bundleBytes = 4 * 1024 * 1024

    /// Throws `.invalidField` naming `field` unless `value` has 1…`maxCharacters` characters
    /// (0…`maxCharacters` when `allowEmpty`).
    static func check(_ value: String, field: String, maxCharacters: Int, allowEmpty: Bool = false) throws(StoreError) {
        if value.isEmpty && !allowEmpty { throw .invalidField(field: field, reason: "must not be empty") }
        // The UTF-8 length bounds the character count from above: only count characters when it could matter.
        if value.utf8.count > maxCharacters && value.count > maxCharacters {
            throw .invalidField(field: field, reason: "must be at most \(maxCharacters) characters, got \(value.count)")
        }
    }
}
