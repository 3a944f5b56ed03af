@testable import JSONCore
import Testing

/// `JSONPlainObject`: what it reads, it reads as `JSONParser` does; the plainest form only.
@Suite struct JSONPlainObjectTests {
    /// The one string member of `{"k":"<content>"}` as `text()` and `asciiString()` read it.
    private func read(_ content: [UInt8]) -> (text: String?, ascii: String?) {
        let bytes = Array(#"{"k":""#.utf8) + content + Array(#""}"#.utf8)
        return bytes.withUnsafeBytes { buffer in
            var object = JSONPlainObject(buffer)
            guard object?.key() != nil else { return (nil, nil) }
            var again = object
            let text = object?.text()
            let ascii = again?.asciiString().map { String(decoding: $0, as: UTF8.self) }
            // The member must end the object either way.
            return (object?.hasMember == false ? text : nil, again?.hasMember == false ? ascii : nil)
        }
    }

    /// Each kind of byte at every place of strings around the eight bytes read at once.
    @Test(arguments: 0..<20)
    func everyByteIsJudgedWhereverItIs(_ length: Int) throws {
        for position in 0..<max(length, 1) {
            for special: [UInt8] in [[0x22], [0x5C], [0x1F], [0x00], [0x7F], [0xC3, 0xA9], [0xFF], [0x20], [0x7E]] {
                var content = Array(repeating: UInt8(ascii: "a"), count: length)
                if length > 0 { content.replaceSubrange(position...position, with: special) } else { content = special }
                let (text, ascii) = read(content)
                let parsed = try? JSONParser.parse(Array(#"{"k":""#.utf8) + content + Array(#""}"#.utf8))
                switch special {
                case [0x22], [0x5C], [0x1F], [0x00], [0xFF]:
                    // Ends the string early, needs an escape or is not UTF-8: never plain.
                    #expect(text == nil && ascii == nil, "\(content)")
                case [0x7F], [0xC3, 0xA9]:
                    #expect(text != nil && text == parsed?.objectValue?["k"]?.stringValue, "\(content)")
                    #expect(ascii == nil, "\(content)")
                default:
                    #expect(text != nil && text == parsed?.objectValue?["k"]?.stringValue, "\(content)")
                    #expect(ascii == text, "\(content)")
                }
            }
        }
    }

    /// `asciiString(count:)` takes a string of its length exactly when `asciiString()` takes it,
    /// whatever byte lies wherever in its words; another length not at all.
    @Test(arguments: 8..<20)
    func aStringOfAKnownLengthIsJudgedAsAnyOther(_ length: Int) {
        for position in 0..<length {
            for special: [UInt8] in [[0x22], [0x5C], [0x1F], [0x00], [0x7F], [0xC3], [0xFF], [0x20], [0x7E], [0x61]] {
                var content = Array(repeating: UInt8(ascii: "b"), count: length)
                content[position] = special[0]
                let bytes = Array(#"{"k":""#.utf8) + content + Array(#""}"#.utf8)
                bytes.withUnsafeBytes { buffer in
                    var object = JSONPlainObject(buffer)
                    _ = object?.key()
                    var searching = object
                    let searched = searching?.asciiString().map(Array.init)
                    // Taken exactly when the searched string has that length (a `"` ends it early).
                    for count in max(8, length - 1)...(length + 1) {
                        var known = object
                        let read = known?.asciiString(count: count).map(Array.init)
                        #expect(read == (searched?.count == count ? searched : nil), "\(content), \(count)")
                        #expect(read == nil || known?.index == searching?.index, "\(content), \(count)")
                    }
                }
            }
        }
    }

    /// `literal(_:)` consumes exactly its bytes where they come next, nothing otherwise.
    @Test func aLiteralIsConsumedOnlyWhereItComes() {
        Array(#"{"action":"print","x":1}"#.utf8).withUnsafeBytes { buffer in
            var object = JSONPlainObject(buffer)!
            #expect(object.nextByte == UInt8(ascii: "\""))
            let misspelt = object.literal(#""actiom":""#)
            #expect(!misspelt && object.index == 1)
            let key = object.literal(#""action":""#)
            #expect(key && object.nextByte == UInt8(ascii: "p"))
            let withTheEnd = object.literal(#"print","x":1}"#)
            #expect(!withTheEnd, "the closing } is not the literal's to take")
            let rest = object.literal(#"print","x":1"#)
            #expect(rest && !object.hasMember && object.nextByte == nil)
        }
    }

    /// A string that is not ASCII is taken exactly when it is valid UTF-8, as
    /// `String(validating:)` (the parser's rule) takes it: `utf8String()` checks it without
    /// making one.
    @Test(arguments: [
        [0xC3, 0xA9], [0xE2, 0x82, 0xAC], [0xF0, 0x9D, 0x84, 0x9E], [0xF4, 0x8F, 0xBF, 0xBF], [0xEF, 0xBF, 0xBF],
        [0xC0, 0x80], [0xC1, 0xBF], [0xE0, 0x80, 0x80], [0xF0, 0x80, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF],
        [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xE2, 0x82], [0xC3], [0x80], [0xBF, 0xC3, 0xA9], [0xFE], [0xC3, 0xA9, 0xA9],
    ] as [[UInt8]])
    func nonASCIIStringsAreTakenWhenTheyAreValidUTF8(_ bytes: [UInt8]) {
        let content = Array("a".utf8) + bytes + Array("z".utf8)
        let valid = String(validating: content, as: UTF8.self)
        let json = Array(#"{"k":""#.utf8) + content + Array(#""}"#.utf8)
        json.withUnsafeBytes { buffer in
            var object = JSONPlainObject(buffer)
            _ = object?.key()
            var again = object
            #expect(object?.utf8String().map(Array.init) == (valid != nil ? content : nil), "\(bytes)")
            #expect(again?.text() == valid, "\(bytes)")
        }
    }

    @Test(arguments: [
        ("0", 0), ("-0", 0), ("7", 7), ("-12", -12), ("999999999999999", 999_999_999_999_999),
        ("-999999999999999", -999_999_999_999_999),
    ])
    func integersOfUpTo15DigitsAreRead(_ text: String, _ value: Int) {
        let bytes = Array(#"{"n":\#(text)}"#.utf8)
        bytes.withUnsafeBytes { buffer in
            var object = JSONPlainObject(buffer)
            _ = object?.key()
            #expect(object?.integer() == value)
            #expect(object?.hasMember == false)
        }
    }

    @Test(arguments: ["1000000000000000", "01", "-", "", "+1", "1.5", "1e3", "1E3", "1.0", "-01", "\"1\"", "null", " 1"])
    func otherNumbersAreNotPlain(_ text: String) {
        let bytes = Array(#"{"n":\#(text)}"#.utf8)
        bytes.withUnsafeBytes { buffer in
            var object = JSONPlainObject(buffer)
            _ = object?.key()
            // Either refused at once, or the rest (`.5`, `e3`) is left and the object not read whole.
            #expect(object?.integer() == nil || object?.hasMember == true)
        }
    }

    @Test(arguments: [
        "", "{", "}", "[]", #"{"a":"b""#, #"{"a":"b"} "#, #" {"a":"b"}"#, #"{"a" :"b"}"#, #"{"a": "b"}"#,
        #"{"a":"b",}"#, #"{,"a":"b"}"#, #"{"a":"b""c":"d"}"#, #"{"\u0061":"b"}"#, #"{"é":"b"}"#, #"{a:"b"}"#,
    ])
    func keysOutsideThePlainestFormAreNotRead(_ text: String) {
        Self.reading(text) { object in
            var complete = true
            while object.hasMember {
                guard object.key() != nil, object.text() != nil else {
                    complete = false
                    break
                }
            }
            #expect(!complete)
        }
    }

    /// `key(_:)` takes a key exactly when `key()` reads that name, leaves the reader where it
    /// was when it does not, and reads on from the same place when it does.
    @Test(arguments: [
        #"{"a":"b"}"#, #"{"ab":"b"}"#, #"{"":"b"}"#, #"{"a""#, #"{"a":}"#, #"{"a"}"#, #"{"a":"b","a":"c"}"#,
        #"{"x":"b","a":"c"}"#, #"{"a":"b""a":"c"}"#, #"{"a" :"b"}"#, #"{"\u0061":"b"}"#, #"{"a":"b",}"#, #"{,"a":"b"}"#,
        #"{"a","#, #"{"a":"b","a"}"#, #"{"a":"b","a":}"#,
    ])
    func aKeyComparedWhereItLiesIsReadAsKeyReadsIt(_ text: String) {
        Self.reading(text) { scanned in
            var compared = scanned
            while scanned.hasMember {
                let before = compared
                let key = scanned.key()
                let isA = key.map { JSONPlainObject.equal($0, "a") } ?? false
                #expect(compared.key("a") == isA, "\(text)")
                if !isA {
                    // Nothing consumed: the general reading goes on from the same place.
                    #expect(compared.key().map { Array($0) } == before.peekKey(), "\(text)")
                    return
                }
                #expect(scanned.text() == compared.text(), "\(text)")
            }
        }
    }

    /// `key(_:)` compares a name as a few words, by its length: every byte of a name of each
    /// length up to 20 counts, and the closing quote and colon after it.
    @Test func everyByteOfANameCountsWhateverItsLength() {
        let names: [StaticString] = [
            "a", "ab", "abc", "abcd", "abcde", "abcdef", "abcdefg", "abcdefgh", "abcdefghi", "abcdefghij",
            "abcdefghijk", "abcdefghijkl", "abcdefghijklm", "abcdefghijklmn", "abcdefghijklmno",
            "abcdefghijklmnop", "abcdefghijklmnopq", "abcdefghijklmnopqr", "abcdefghijklmnopqrs",
            "abcdefghijklmnopqrst",
        ]
        for name in names {
            let text = String(decoding: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount), as: UTF8.self)
            Self.reading(#"{"\#(text)":1}"#) { object in
                let found = object.key(name), value = object.integer()
                #expect(found && value == 1, "\(text)")
            }
            Self.reading(#"{"x":2,"\#(text)":1}"#) { object in
                let first = object.key("x") && object.integer() == 2, found = object.key(name)
                #expect(first && found, "\(text) after a member")
            }
            var variants = [text + "x", String(text.dropLast()), "x" + text]
            for position in 0..<text.utf8.count {
                var bytes = Array(text.utf8)
                bytes[position] = UInt8(ascii: "Z")
                variants.append(String(decoding: bytes, as: UTF8.self))
            }
            for variant in variants {
                Self.reading(#"{"\#(variant)":1}"#) { object in
                    let found = object.key(name)
                    #expect(!found, "\(variant) read as \(text)")
                }
            }
            for after in [#"" :1}"#, #"x:1}"#, #""}"#, #"";1}"#] {
                Self.reading(#"{"\#(text)\#(after)"#) { object in
                    let found = object.key(name)
                    #expect(!found, "\(text)\(after)")
                }
            }
        }
    }
}

extension JSONPlainObjectTests {
    /// Runs `body` on a reader of `text`, if it is an object at all.
    private static func reading(_ text: String, _ body: (inout JSONPlainObject) -> Void) {
        Array(text.utf8).withUnsafeBytes { buffer in
            guard var object = JSONPlainObject(buffer) else { return }
            body(&object)
        }
    }
}

private extension JSONPlainObject {
    /// The next key as `key()` reads it, leaving this reader as it is.
    func peekKey() -> [UInt8]? {
        var copy = self
        return copy.key().map { Array($0) }
    }
}
