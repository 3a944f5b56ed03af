/// Bounds on everything a policy document can make Proctor allocate. A document past any
/// of them is refused with a problem that names the limit; nothing is silently truncated.
public enum PolicyLimits {
    /// Bytes in one policy file or bundle, and in all files of a policy directory together.
    public static let maxDocumentBytes = 64 * 1024 * 1024
    /// Apps in one document and in a merged policy.
    public static let maxApps = 100_000
    /// Nesting of arrays and objects, counting the document itself; leaves room for
    /// modest structure inside an app's `config`.
    public static let maxNestingDepth = 32
    /// Bytes in any string the policy language interprets (app ids, paths, globs, user
    /// names); Linux paths stop at 4096 bytes (PATH_MAX).
    public static let maxStringBytes = 4096
    /// Bytes in `version`.
    public static let maxVersionBytes = 128
    /// Bytes in an app id: a DNS name stops at 253.
    public static let maxAppIDBytes = 253
    /// Entries in any list (`users`, `share.exempt`, `fileExport.allow`, `fileExport.deny`).
    public static let maxListCount = 1024
    /// Bytes of one app's `config`, serialised canonically.
    public static let maxConfigBytes = 256 * 1024
    /// `*.json` files in a policy directory.
    public static let maxFiles = 1024
}
