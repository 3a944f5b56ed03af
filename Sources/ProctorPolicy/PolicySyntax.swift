/// The lexical rules of the policy language's strings: app ids, app-id globs, user names,
/// executable paths and path globs. Public so the daemon and the CLI check input with
/// exactly the rules the parser applies.
public enum PolicySyntax {
    /// A reverse-DNS app id: `[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+`, at most
    /// `PolicyLimits.maxAppIDBytes` bytes.
    public static func isAppID(_ text: String) -> Bool {
        guard text.utf8.count <= PolicyLimits.maxAppIDBytes else { return false }
        let labels = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return labels.count >= 2 && labels.allSatisfy { !$0.isEmpty && $0.allSatisfy(isIDCharacter) }
    }

    /// An app id in which `*` stands for any run of characters (`com.example.*`, `*`).
    public static func isAppIDGlob(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= PolicyLimits.maxAppIDBytes
            && text.utf8.allSatisfy { isIDCharacter($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "*") }
    }

    /// `*` (any user) or a user name: letters, digits, `_`, `.`, `-`, not starting with a
    /// digit, `.` or `-` (so it never reads as a uid or an option), an optional final `$`
    /// (Samba machine accounts), at most 256 bytes.
    public static func isUserName(_ text: String) -> Bool {
        if text == "*" { return true }
        var bytes = Array(text.utf8)
        if bytes.last == UInt8(ascii: "$") { bytes.removeLast() }
        guard let first = bytes.first, bytes.count <= 256, isLetter(first) || first == UInt8(ascii: "_") else { return false }
        return bytes.allSatisfy { isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }
    }

    /// An absolute path as the kernel reports a resolved one: starts with `/`, no empty,
    /// `.` or `..` components, no trailing `/`, no NUL.
    public static func isNormalisedAbsolutePath(_ text: String) -> Bool {
        checkPath(text, allowingDoubleStar: true)
    }

    /// A `fileExport` glob: a normalised absolute path in which `*` matches within one
    /// component and `**`, written as a whole component, matches any number of them.
    public static func isPathGlob(_ text: String) -> Bool {
        checkPath(text, allowingDoubleStar: false)
    }

    /// One pass over the bytes, without allocating: policies hold many paths and proctord's
    /// start-up reads them all. With `allowingDoubleStar` false, `**` may only form a whole
    /// component.
    private static func checkPath(_ text: String, allowingDoubleStar: Bool) -> Bool {
        guard text.utf8.first == UInt8(ascii: "/"), text.utf8.count <= PolicyLimits.maxStringBytes else { return false }
        if text.utf8.count == 1 { return true }
        var componentLength = 0
        var dots = 0            // `.` bytes in the component so far
        var stars = 0           // `*` bytes in the component so far
        var hasDoubleStar = false
        var previous: UInt8 = 0
        func componentIsValid() -> Bool {
            guard componentLength > 0, !(dots == componentLength && componentLength <= 2) else { return false }
            return allowingDoubleStar || !hasDoubleStar || (stars == 2 && componentLength == 2)
        }
        for byte in text.utf8.dropFirst() {
            switch byte {
            case 0: return false
            case UInt8(ascii: "/"):
                guard componentIsValid() else { return false }
                (componentLength, dots, stars, hasDoubleStar) = (0, 0, 0, false)
            default:
                componentLength += 1
                if byte == UInt8(ascii: ".") { dots += 1 }
                if byte == UInt8(ascii: "*") {
                    stars += 1
                    if previous == UInt8(ascii: "*") { hasDoubleStar = true }
                }
            }
            previous = byte
        }
        return componentIsValid()
    }

    private static func isIDCharacter(_ byte: UInt8) -> Bool { isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: "-") }
    private static func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
    private static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }
}
