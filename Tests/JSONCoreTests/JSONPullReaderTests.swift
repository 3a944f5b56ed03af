import JSONCore
import Testing

/// `JSONPullReader`'s reading of keys and strings against known names: the same strings as
/// `nextKey()` and `string()` read, escapes and all, and the same errors.
@Suite struct JSONPullReaderTests {
    private static let names = ["session", "action", "é"].map { Array($0.utf8) }

    /// The keys of `text`'s object, read by index, and the string values by index too.
    private func read(_ text: String) throws(JSONParseError) -> [Int] {
        var reader = JSONPullReader(Array(text.utf8))
        try reader.beginObject()
        var found: [Int] = []
        while let key = try reader.nextKey(among: Self.names) {
            found.append(key)
            found.append(try reader.string(among: Self.names))
        }
        try reader.end()
        return found
    }

    @Test func keysAndStringsAreMatchedWithOrWithoutEscapes() throws {
        #expect(try read(#"{"session":"action","action":"session"}"#) == [0, 1, 1, 0])
        #expect(try read(#" { "s\u0065ssion" : "\u00e9" , "\u0061ction":"é" } "#) == [0, 2, 1, 2])
        #expect(try read(#"{"other":"sessio","Session":"session "}"#) == [3, 3, 3, 3])
        #expect(try read(#"{"":""}"#) == [3, 3])
    }

    @Test(arguments: [
        #"{"session":"a\#u{1}b"}"#, #"{"session":"unterminated}"#, #"{"session":"\x"}"#, #"{"ses"#, #"{"session" 1}"#,
        #"{session:"a"}"#,
    ])
    func malformedInputIsAnErrorAsTheParserSaysIt(_ text: String) {
        #expect(throws: JSONParseError.self) { try read(text) }
        #expect(throws: JSONParseError.self) { try JSONParser.parse(Array(text.utf8)) }
    }

    @Test func invalidUTF8IsAnErrorInAKeyAndInAString() {
        for bytes in [Array(#"{"s"#.utf8) + [0xFF] + Array(#"":"a"}"#.utf8), Array(#"{"s":"a"#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)] {
            var reader = JSONPullReader(bytes)
            #expect(throws: JSONParseError.self) {
                try reader.beginObject()
                while try reader.nextKey(among: Self.names) != nil { _ = try reader.string(among: Self.names) }
            }
        }
    }
}
