/// A JSON value. Objects are unordered; serialisation sorts their keys, so equal values
/// always serialise to equal bytes (the canonical form the policy hash is built on).
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// Every JSON number. Integers are exact up to 2^53, which covers every count and
    /// size in Proctor's protocols.
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    public var isNull: Bool { if case .null = self { true } else { false } }

    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }

    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }

    public var doubleValue: Double? { if case .number(let n) = self { n } else { nil } }

    /// The number as an `Int` when it is integral and in range; `nil` otherwise.
    public var intValue: Int? {
        guard case .number(let n) = self, n.rounded(.towardZero) == n,
              n >= -9_007_199_254_740_992, n <= 9_007_199_254_740_992 else { return nil }
        return Int(n)
    }

    public var arrayValue: [JSONValue]? { if case .array(let a) = self { a } else { nil } }

    public var objectValue: [String: JSONValue]? { if case .object(let o) = self { o } else { nil } }

    /// The JSON type's name as error messages use it: "a string", "an object", …
    public var typeDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    public static func number(_ value: Int) -> JSONValue { .number(Double(value)) }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
