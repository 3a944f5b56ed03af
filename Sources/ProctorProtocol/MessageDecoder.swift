import JSONCore

/// Reads a message type through its `Decodable` conformance from the JSON value it came as.
/// Each decoder stands for one value of the message, at its path, so an error names the
/// field, what it is and what was expected, as `MalformedMessage` says it:
/// `apps[0].appId is a number, expected a string`.
struct MessageDecoder: Decoder, SingleValueDecodingContainer {
    /// The value; nil when the field is missing.
    let value: JSONValue?
    /// The path of the object or array holding the value, and the value's key in it (nil
    /// at the top): the full path is only built for an error or a nested value.
    let parentPath: [any CodingKey]
    let key: (any CodingKey)?
    /// The field may be absent or null (`decodeIfPresent`): what is expected includes null.
    let optional: Bool

    var codingPath: [any CodingKey] { key.map { parentPath + [$0] } ?? parentPath }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Reads `parameters` as a `Message`: the one entry point, where errors from custom
    /// `init(from:)`s (`DecodingError`) become `MalformedMessage`s too.
    static func read<Message: Decodable>(_ type: Message.Type, from parameters: [String: JSONValue])
        throws(MalformedMessage) -> Message
    {
        do {
            return try MessageDecoder(value: .object(parameters), parentPath: [], key: nil, optional: false).read(Message.self)
        } catch let error as MalformedMessage {
            throw error
        } catch let DecodingError.dataCorrupted(context), let DecodingError.typeMismatch(_, context),
                let DecodingError.valueNotFound(_, context), let DecodingError.keyNotFound(_, context) {
            throw MalformedMessage(field: Self.field(context.codingPath), reason: context.debugDescription)
        } catch {
            throw MalformedMessage(field: "", reason: "\(error)")
        }
    }

    /// The value as a `T`: a scalar or free-form JSON directly, anything else by its own
    /// `init(from:)`, after which a nested message is checked.
    func read<T: Decodable>(_ type: T.Type) throws -> T {
        if let scalar = try directly(T.self) { return scalar }
        let decoded: T
        do {
            decoded = try T(from: self)
        } catch where T.self is any CaseIterable.Type {
            // An enum's own init(from:) reads its raw value but cannot say which are allowed.
            throw wrongShape(expected: "one of \(Self.rawValues(of: T.self).joined(separator: ", "))", showingText: true)
        }
        if let message = decoded as? any ProtocolMessage {
            do { try message.check() } catch {
                let prefix = Self.field(codingPath)
                throw MalformedMessage(field: prefix.isEmpty ? error.field : "\(prefix).\(error.field)", reason: error.reason)
            }
        }
        return decoded
    }

    /// The value as a `T` when `T` is a type the wire has (a string, a number, …); nil for
    /// other types. Only plain comparisons of types: casts to a protocol cost far more.
    func directly<T>(_ type: T.Type) throws(MalformedMessage) -> T? {
        if T.self == String.self { return try read(.string) as? T }
        if T.self == Int.self { return try read(.integer) as? T }
        if T.self == Bool.self { return try read(.boolean) as? T }
        if T.self == Double.self { return try read(.number) as? T }
        if T.self == [String: JSONValue].self { return try read(.object) as? T }
        if T.self == JSONValue.self { return try read(.value) as? T }
        return nil
    }

    func read<Value>(_ scalar: WireScalar<Value>) throws(MalformedMessage) -> Value {
        guard let read = value.flatMap(scalar.read) else { throw wrongShape(expected: scalar.name) }
        return read
    }

    /// The raw values of an enum's cases, for an error; `FieldReader.choice` says the same.
    private static func rawValues<T>(of type: T.Type) -> [String] {
        func names<Choice: CaseIterable>(_ type: Choice.Type) -> [String] {
            Choice.allCases.map { ($0 as? any RawRepresentable).map { "\($0.rawValue)" } ?? "\($0)" }
        }
        return (T.self as? any CaseIterable.Type).map { names($0) } ?? []
    }

    /// The error for a value that is missing or of another type than `expected`;
    /// `showingText`: a string is quoted rather than called "a string".
    func wrongShape(expected: String, showingText: Bool = false) -> MalformedMessage {
        let found = switch value {
        case nil: "is missing"
        case .string(let text)? where showingText: "is \(MalformedMessage.quoted(text))"
        case let value?: "is \(value.typeDescription)"
        }
        return MalformedMessage(field: Self.field(codingPath), reason: "\(found), expected \(expected)\(optional ? " or null" : "")")
    }

    /// A coding path as `MalformedMessage` names a field: `directives[0].id`.
    static func field(_ path: [any CodingKey]) -> String {
        var field = ""
        for key in path {
            if let index = key.intValue {
                field += "[\(index)]"
            } else {
                field += field.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return field
    }

    // MARK: Decoder

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard let members = value?.objectValue else { throw wrongShape(expected: "an object") }
        return KeyedDecodingContainer(KeyedMessageReader<Key>(members: members, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard let elements = value?.arrayValue else { throw wrongShape(expected: "an array") }
        return UnkeyedMessageReader(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueDecodingContainer { self }

    // MARK: SingleValueDecodingContainer

    func decodeNil() -> Bool { value?.isNull ?? true }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if let scalar = try directly(T.self) { return scalar }
        // The other integer and floating-point types: their own init(from:) comes back here.
        if let integer = T.self as? any FixedWidthInteger.Type { return try exactly(integer) as! T }
        if let float = T.self as? any BinaryFloatingPoint.Type { return try approximately(float) as! T }
        return try read(T.self)
    }

    private func exactly<Integer: FixedWidthInteger>(_ type: Integer.Type) throws(MalformedMessage) -> Integer {
        try read(WireScalar(name: WireScalar.integer.name) { $0.intValue.flatMap(Integer.init(exactly:)) })
    }

    private func approximately<Float: BinaryFloatingPoint>(_ type: Float.Type) throws(MalformedMessage) -> Float {
        try read(WireScalar(name: WireScalar.number.name) { $0.doubleValue.map(Float.init) })
    }
}

/// The fields of a message read one at a time, for the messages read by hand rather than
/// through their `Decodable` (`Agent.Decide`, the hot request path, where that costs several
/// times more). Each field is read by a `MessageDecoder`, so the errors are the same.
/// Top-level messages only: `Key` is the message's own `CodingKeys`.
struct FieldReader<Key: CodingKey> {
    let members: [String: JSONValue]

    init(_ members: [String: JSONValue], keys: Key.Type) { self.members = members }

    func required<Value>(_ key: Key, _ scalar: WireScalar<Value>) throws(MalformedMessage) -> Value {
        guard let value = members[key.stringValue].flatMap(scalar.read) else { throw wrongShape(key, scalar.name, optional: false) }
        return value
    }

    /// Absent and null are both "not given".
    func optional<Value>(_ key: Key, _ scalar: WireScalar<Value>) throws(MalformedMessage) -> Value? {
        guard let found = members[key.stringValue], !found.isNull else { return nil }
        guard let value = scalar.read(found) else { throw wrongShape(key, scalar.name, optional: true) }
        return value
    }

    /// An enum, by its raw value.
    func choice<Choice: CaseIterable & RawRepresentable<String>>(_ key: Key) throws(MalformedMessage) -> Choice {
        guard let choice = members[key.stringValue]?.stringValue.flatMap(Choice.init(rawValue:)) else {
            throw wrongShape(key, "one of \(Choice.allCases.map(\.rawValue).joined(separator: ", "))", optional: false, showingText: true)
        }
        return choice
    }

    /// A decoder is only made for an error: it costs more than reading the value.
    private func wrongShape(_ key: Key, _ expected: String, optional: Bool, showingText: Bool = false) -> MalformedMessage {
        MessageDecoder(value: members[key.stringValue], parentPath: [], key: key, optional: optional)
            .wrongShape(expected: expected, showingText: showingText)
    }
}

/// A type the wire has: what it is called in an error, and how it is read from JSON.
struct WireScalar<Value> {
    let name: String
    let read: (JSONValue) -> Value?
}

extension WireScalar<String> { static var string: Self { Self(name: "a string", read: \.stringValue) } }
extension WireScalar<Int> { static var integer: Self { Self(name: "an integer", read: \.intValue) } }
extension WireScalar<Bool> { static var boolean: Self { Self(name: "a boolean", read: \.boolValue) } }
extension WireScalar<Double> { static var number: Self { Self(name: "a number", read: \.doubleValue) } }
extension WireScalar<[String: JSONValue]> { static var object: Self { Self(name: "an object", read: \.objectValue) } }
extension WireScalar<JSONValue> { static var value: Self { Self(name: "a value") { $0 } } }

/// A key of a value that has no `CodingKey` of its own: an array's element, `super`.
struct WireKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }

    init(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }

    static let `super` = WireKey(stringValue: "super")
}

/// The fields of a JSON object, each read by a `MessageDecoder` at its key.
struct KeyedMessageReader<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: JSONValue]
    let codingPath: [any CodingKey]

    var allKeys: [Key] { members.keys.compactMap(Key.init(stringValue:)) }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    func decodeNil(forKey key: Key) -> Bool { members[key.stringValue]?.isNull ?? true }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try field(key).read(T.self) }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { try optionalField(key) }

    // The standard library's own defaults for these would be chosen over the generic one,
    // and their errors would not say that null is accepted.
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try optionalField(key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try optionalField(key) }
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try optionalField(key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try optionalField(key) }

    /// Absent and null are both "not given" (as Varlink has it).
    private func optionalField<T: Decodable>(_ key: Key) throws -> T? {
        guard let value = members[key.stringValue], !value.isNull else { return nil }
        return try MessageDecoder(value: value, parentPath: codingPath, key: key, optional: true).read(T.self)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try field(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { try field(key).unkeyedContainer() }

    func superDecoder() -> any Decoder { field(WireKey.super) }

    func superDecoder(forKey key: Key) -> any Decoder { field(key) }

    private func field(_ key: some CodingKey) -> MessageDecoder {
        MessageDecoder(value: members[key.stringValue], parentPath: codingPath, key: key, optional: false)
    }
}

/// The elements of a JSON array, in order, each read by a `MessageDecoder` at its index.
struct UnkeyedMessageReader: UnkeyedDecodingContainer {
    let elements: [JSONValue]
    let codingPath: [any CodingKey]
    private(set) var currentIndex = 0

    init(elements: [JSONValue], codingPath: [any CodingKey]) {
        self.elements = elements
        self.codingPath = codingPath
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    mutating func decodeNil() -> Bool {
        guard !isAtEnd, elements[currentIndex].isNull else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().read(T.self) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }

    mutating func superDecoder() -> any Decoder { next() }

    /// The decoder of the next element (past the end: of a missing one).
    private mutating func next() -> MessageDecoder {
        defer { currentIndex += 1 }
        return MessageDecoder(value: isAtEnd ? nil : elements[currentIndex], parentPath: codingPath,
                              key: WireKey(intValue: currentIndex), optional: false)
    }
}
