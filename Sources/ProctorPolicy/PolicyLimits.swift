/// Bounds on everything a policy document can make Proctor allocate. A document past any
/// of them is refused with a problem that names the limit; nothing is silently truncated.
public enum PolicyLimits {
    /// Bytes in one policy file or bundle, in all files of a policy directory together, and
    /// in a bundle's canonical form (what proctord stores and sends back). Every other size
    /// bound on policy derives from it: the state store's bundle limit, proctord's Admin
    /// message limit (`maxRequestBytes`) and proctorctl's reply limit (`maxReplyBytes`).
    /// 16 MiB holds 100 000 (`maxApps`) apps of about 160 bytes each, or 10 000 of 1.6 KiB.
    public static let maxDocumentBytes = 16 * 1024 * 1024
    /// Room for the rest of a Varlink message that carries a policy document: the method
    /// name, the other parameters (`expectedVersion`) and the framing.
    public static let maxEnvelopeBytes = 64 * 1024
    /// The largest message proctord's Admin socket accepts: a policy document in canonical
    /// form (`ApplyPolicy`, `ValidatePolicy`) and its envelope.
    public static let maxRequestBytes = maxDocumentBytes + maxEnvelopeBytes
    /// The largest reply proctorctl accepts. The policy in force (`GetPolicy`) is `policy.d`
    /// overlaid by a bundle, each up to `maxDocumentBytes`, and numbers written out in full
    /// can make a canonical form longer than its file: four documents' worth, which is also
    /// the output proctord buffers per connection (four of its largest messages).
    public static let maxReplyBytes = 4 * maxRequestBytes
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

extension PolicyLimits {
    /// `bytes` for messages: `16777216 bytes (16 MiB)`.
    public static func describe(bytes: Int) -> String {
        bytes % (1 << 20) == 0 ? "\(bytes) bytes (\(bytes >> 20) MiB)" : "\(bytes) bytes"
    }
}
