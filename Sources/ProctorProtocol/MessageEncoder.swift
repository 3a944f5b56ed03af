import JSONCore

/// Writes a message type through its `Encodable` conformance as the JSON value it is sent
/// as. One encoder builds one value; the containers it hands out write into it, and a
/// nested container's encoder is written into its slot when the value is finished.
final class MessageEncoder: Encoder, SingleValueEncodingContainer {
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// What the containers wrote: at most one of them is set.
    fileprivate var object: [String: JSONValue]?
    fileprivate var array: [JSONValue]?
    private var single: JSONValue?
    /// Values written by their own encoders (nested containers), and where they go.
    fileprivate var nested: [(slot: JSONPath.Component, encoder: MessageEncoder)] = []

    init(codingPath: [any CodingKey]) { self.codingPath = codingPath }

    /// The fields of `message`. Encoding cannot fail: the containers throw nothing, and a
    /// message type's `encode(to:)` (synthesized or not) only writes its fields to them.
    static func fields(of message: some Encodable) -> [String: JSONValue] {
        let encoder = MessageEncoder(codingPath: [])
        do { try message.encode(to: encoder) } catch { preconditionFailure("\(type(of: message)) could not be encoded: \(error)") }
        return encoder.finished().objectValue ?? [:]
    }

    /// `value` as JSON: a scalar or JSON itself directly, anything else through its own
    /// `encode(to:)` (`codingPath` is only built then).
    static func wire<T: Encodable>(_ value: T, at codingPath: @autoclosure () -> [any CodingKey]) throws -> JSONValue {
        if let json = directly(value) { return json }
        let encoder = MessageEncoder(codingPath: codingPath())
        try value.encode(to: encoder)
        return encoder.finished()
    }

    /// `value` as JSON when it is of a type the wire has; nil for other types. Only plain
    /// comparisons of types: casts to a protocol cost far more.
    private static func directly<T>(_ value: T) -> JSONValue? {
        if T.self == String.self { return (value as? String).map(JSONValue.string) }
        if T.self == Int.self { return (value as? Int).map(JSONValue.number) }
        if T.self == Bool.self { return (value as? Bool).map(JSONValue.bool) }
        if T.self == Double.self { return (value as? Double).map(JSONValue.number) }
        if T.self == [String: JSONValue].self { return (value as? [String: JSONValue]).map(JSONValue.object) }
        if T.self == JSONValue.self { return value as? JSONValue }
        return nil
    }

    /// The value written. A type that wrote nothing (a message without fields) is `{}`.
    func finished() -> JSONValue {
        for (slot, encoder) in nested {
            switch slot {
            case .key(let key): object?[key] = encoder.finished()
            case .index(let index): array?[index] = encoder.finished()
            }
        }
        nested = []
        if let single { return single }
        if let array { return .array(array) }
        return .object(object ?? [:])
    }

    /// A new encoder for the value at `slot`, written there when this one is finished.
    fileprivate func encoder(for slot: JSONPath.Component, key: any CodingKey) -> MessageEncoder {
        let encoder = MessageEncoder(codingPath: codingPath + [key])
        nested.append((slot, encoder))
        return encoder
    }

    // MARK: Encoder

    /// Called again (a type writing another's fields into its own object), the same object.
    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if object == nil { object = [:] }
        return KeyedEncodingContainer(KeyedMessageWriter<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if array == nil { array = [] }
        return UnkeyedMessageWriter(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    // MARK: SingleValueEncodingContainer

    func encodeNil() { single = .null }

    func encode<T: Encodable>(_ value: T) throws {
        // The other integer and floating-point types: their own encode(to:) comes back here.
        if let json = Self.directly(value) {
            single = json
        } else if let integer = value as? any BinaryInteger {
            single = .number(Double(integer))
        } else if let float = value as? any BinaryFloatingPoint {
            single = .number(Double(float))
        } else {
            single = try Self.wire(value, at: codingPath)
        }
    }
}

/// Writes the fields of a JSON object. Nil optionals are left out (`encodeIfPresent`).
struct KeyedMessageWriter<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: MessageEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    func encodeNil(forKey key: Key) { encoder.object?[key.stringValue] = .null }

    func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let field = try MessageEncoder.wire(value, at: codingPath + [key])
        encoder.object?[key.stringValue] = field
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        encoder.encoder(for: .key(key.stringValue), key: key).container(keyedBy: keyType)
    }

    func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        encoder.encoder(for: .key(key.stringValue), key: key).unkeyedContainer()
    }

    func superEncoder() -> any Encoder { encoder.encoder(for: .key(WireKey.super.stringValue), key: WireKey.super) }

    func superEncoder(forKey key: Key) -> any Encoder { encoder.encoder(for: .key(key.stringValue), key: key) }
}

/// Appends the elements of a JSON array.
struct UnkeyedMessageWriter: UnkeyedEncodingContainer {
    let encoder: MessageEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int { encoder.array?.count ?? 0 }

    func encodeNil() { encoder.array?.append(.null) }

    func encode<T: Encodable>(_ value: T) throws {
        let element = try MessageEncoder.wire(value, at: codingPath + [WireKey(intValue: count)])
        encoder.array?.append(element)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        nextElement().container(keyedBy: keyType)
    }

    func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { nextElement().unkeyedContainer() }

    func superEncoder() -> any Encoder { nextElement() }

    /// An encoder for the next element, which holds null until it is finished.
    private func nextElement() -> MessageEncoder {
        let index = count
        encoder.array?.append(.null)
        return encoder.encoder(for: .index(index), key: WireKey(intValue: index))
    }
}
