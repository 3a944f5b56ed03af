/// A semantic version (semver.org 2.0): `MAJOR.MINOR.PATCH`, an optional `-pre.release`
/// and optional `+build` metadata, ordered by semver precedence (build metadata ignored;
/// a pre-release sorts before its release; numeric identifiers numerically, others in
/// ASCII order, numeric before alphanumeric, and a longer list wins a tie).
///
/// For apps that report two components (`"2.3"`) the patch defaults to 0.
public struct SemanticVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var major: Int
    public var minor: Int
    public var patch: Int
    public var preRelease: [String]
    public var build: [String]

    public init(major: Int, minor: Int, patch: Int, preRelease: [String] = [], build: [String] = []) {
        self.major = major
        self.minor = minor
        self.patch = patch
        self.preRelease = preRelease
        self.build = build
    }

    /// Parses `"2.10.0"`, `"2.3"`, `"1.0.0-rc.1+abc"`; nil for anything else.
    public init?(_ text: String) {
        guard let version = Self.plain(text) ?? Self.parsed(text) else { return nil }
        self = version
    }

    /// Any version semver allows, `-pre.release` and `+build` included.
    static func parsed(_ text: String) -> SemanticVersion? {
        var rest = Substring(text)
        var build: [String] = []
        if let plus = rest.firstIndex(of: "+") {
            build = rest[rest.index(after: plus)...].split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            rest = rest[..<plus]
            guard build.allSatisfy({ !$0.isEmpty && $0.allSatisfy(Self.isIdentifierCharacter) }) else { return nil }
        }
        var preRelease: [String] = []
        if let dash = rest.firstIndex(of: "-") {
            preRelease = rest[rest.index(after: dash)...].split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            rest = rest[..<dash]
            guard preRelease.allSatisfy({ !$0.isEmpty && $0.allSatisfy(Self.isIdentifierCharacter) }) else { return nil }
            guard preRelease.allSatisfy({ !Self.isNumeric($0) || $0 == "0" || !$0.hasPrefix("0") }) else { return nil }
        }
        let numbers = rest.split(separator: ".", omittingEmptySubsequences: false)
        guard numbers.count == 2 || numbers.count == 3 else { return nil }
        var parsed: [Int] = []
        for number in numbers {
            guard Self.isNumeric(number), number == "0" || !number.hasPrefix("0"), number.count <= 9,
                  let value = Int(number) else { return nil }
            parsed.append(value)
        }
        return SemanticVersion(major: parsed[0], minor: parsed[1], patch: parsed.count == 3 ? parsed[2] : 0,
                               preRelease: preRelease, build: build)
    }

    public var description: String {
        var text = "\(major).\(minor).\(patch)"
        if !preRelease.isEmpty { text += "-" + preRelease.joined(separator: ".") }
        if !build.isEmpty { text += "+" + build.joined(separator: ".") }
        return text
    }

    public static func < (lhs: SemanticVersion, rhs: SemanticVersion) -> Bool {
        if (lhs.major, lhs.minor, lhs.patch) != (rhs.major, rhs.minor, rhs.patch) {
            return (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
        }
        switch (lhs.preRelease.isEmpty, rhs.preRelease.isEmpty) {
        case (true, true), (true, false): return false
        case (false, true): return true
        case (false, false): break
        }
        for (a, b) in zip(lhs.preRelease, rhs.preRelease) where a != b {
            switch (Int(a), Int(b)) {
            case let (x?, y?): return x < y
            case (_?, nil): return true
            case (nil, _?): return false
            case (nil, nil): return a.utf8.lexicographicallyPrecedes(b.utf8)
            }
        }
        return lhs.preRelease.count < rhs.preRelease.count
    }

    /// Precedence equality: build metadata does not count.
    public static func == (lhs: SemanticVersion, rhs: SemanticVersion) -> Bool {
        !(lhs < rhs) && !(rhs < lhs)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(major); hasher.combine(minor); hasher.combine(patch); hasher.combine(preRelease)
    }

    /// `MAJOR.MINOR[.PATCH]` and nothing else, read from the UTF-8 bytes: what nearly every
    /// policy and app says, without the general path's `Character` scanning (7 % of reading
    /// a 10 000-app policy). nil for any other text, valid or not: the general path decides.
    static func plain(_ text: String) -> SemanticVersion? {
        var numbers = (0, 0, 0), count = 0, value = 0, digits = 0, leadingZero = false
        func end() -> Bool {
            guard digits > 0, count < 3 else { return false }
            switch count {
            case 0: numbers.0 = value
            case 1: numbers.1 = value
            default: numbers.2 = value
            }
            (count, value, digits, leadingZero) = (count + 1, 0, 0, false)
            return true
        }
        for byte in text.utf8 {
            if byte == UInt8(ascii: ".") {
                guard end() else { return nil }
                continue
            }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), !leadingZero, digits < 9 else { return nil }
            if digits == 0 { leadingZero = byte == UInt8(ascii: "0") }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
            digits += 1
        }
        guard end(), count >= 2 else { return nil }
        return SemanticVersion(major: numbers.0, minor: numbers.1, patch: numbers.2)
    }

    private static func isIdentifierCharacter(_ c: Character) -> Bool {
        c.isASCII && (c.isLetter || c.isNumber || c == "-")
    }

    private static func isNumeric(_ s: some StringProtocol) -> Bool {
        !s.isEmpty && s.allSatisfy { $0.isASCII && $0.isNumber }
    }
}

/// Sent as its text (`"2.3.0"`); text that is not a version is refused, quoted.
extension SemanticVersion: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let version = SemanticVersion(text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "\"\(text.prefix(64))\" is not a semantic version such as 2.3.0")
        }
        self = version
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
