import Testing
@testable import JSONCore

/// The error a document must fail with, or nil when it parsed.
private func parseError(_ text: String, maxDepth: Int = JSONParser.defaultMaxDepth) -> JSONParseError? {
    parseError(Array(text.utf8), maxDepth: maxDepth)
}

/// Also checks that `syntaxError` reports the same error, path included, and `parse` the
/// same message and place.
private func parseError(_ bytes: [UInt8], maxDepth: Int = JSONParser.defaultMaxDepth) -> JSONParseError? {
    let error: JSONParseError?
    do {
        _ = try JSONParser.parseDocument(bytes, maxDepth: maxDepth)
        error = nil
    } catch let parseError {
        error = parseError
    }
    #expect(JSONParser.syntaxError(in: bytes, maxDepth: maxDepth) == error)
    do {
        _ = try JSONParser.parse(bytes, maxDepth: maxDepth)
        #expect(error == nil)
    } catch let parseError {
        #expect(parseError.message == error?.message && parseError.location == error?.location && parseError.offset == error?.offset)
    }
    return error
}

@Suite struct JSONParserValueTests {
    @Test func parsesEveryKindOfValue() throws {
        let value = try JSONParser.parse(#" { "a": [1, -2.5, 3e2, true, false, null], "b": {"c": "d"}, "e": "" } "#)
        #expect(value == ["a": [1, -2.5, 300, true, false, nil], "b": ["c": "d"], "e": ""])
    }

    @Test func decodesEscapes() throws {
        let value = try JSONParser.parse(#""\"\\\/\b\f\n\r\t\u0041\u00e9\u20AC""#)
        #expect(value == .string("\"\\/\u{8}\u{C}\n\r\tAé€"))
    }

    @Test func decodesSurrogatePairs() throws {
        #expect(try JSONParser.parse(#""\ud83d\ude00""#) == .string("😀"))
        #expect(try JSONParser.parse(#""x\uD834\uDD1Ey""#) == .string("x𝄞y"))
    }

    @Test func keepsRawUTF8() throws {
        #expect(try JSONParser.parse("\"Grüße 😀\"") == .string("Grüße 😀"))
    }

    @Test func integersAreExactToTwoToThe53() throws {
        #expect(try JSONParser.parse("9007199254740992").intValue == 9_007_199_254_740_992)
        #expect(try JSONParser.parse("-9007199254740992").intValue == -9_007_199_254_740_992)
        #expect(try JSONParser.parse("0").intValue == 0)
        #expect(try JSONParser.parse("1.5").intValue == nil)
    }

    @Test func acceptsNestingUpToTheLimit() throws {
        let deep = String(repeating: "[", count: 10) + String(repeating: "]", count: 10)
        #expect(parseError(deep, maxDepth: 10) == nil)
    }
}

@Suite struct JSONParserErrorTests {
    @Test func emptyInput() throws {
        let error = try #require(parseError(""))
        #expect(error.message == "unexpected end of input: expected a value")
        #expect(error.location == SourceLocation(line: 1, column: 1))
    }

    @Test func trailingGarbage() throws {
        let error = try #require(parseError("{}\n  x"))
        #expect(error.message == "unexpected 'x' after the end of the document")
        #expect(error.location == SourceLocation(line: 2, column: 3))
    }

    @Test func unexpectedCharacterWhereAValueBelongs() throws {
        let error = try #require(parseError("{\n  \"a\": ?\n}"))
        #expect(error.message == "unexpected '?': expected a value")
        #expect(error.location == SourceLocation(line: 2, column: 8))
        #expect(error.path.description == "a")
    }

    @Test func trailingComma() throws {
        let error = try #require(parseError("{\"a\": [1, 2,]}"))
        #expect(error.message == "unexpected ']': expected a value")
        #expect(error.location == SourceLocation(line: 1, column: 13))
        #expect(error.path.description == "a[2]")
    }

    @Test func missingColon() throws {
        let error = try #require(parseError("{\"a\" 1}"))
        #expect(error.message == "expected ':' after the key \"a\"")
        #expect(error.location == SourceLocation(line: 1, column: 6))
    }

    @Test func unquotedKey() throws {
        let error = try #require(parseError("{a: 1}"))
        #expect(error.message == "unexpected 'a': expected a key in double quotes")
        #expect(error.location == SourceLocation(line: 1, column: 2))
    }

    @Test func missingCommaInObjectAndArray() throws {
        let object = try #require(parseError("{\"a\": 1 \"b\": 2}"))
        #expect(object.message == "unexpected '\"': expected ',' or '}'")
        #expect(object.location == SourceLocation(line: 1, column: 9))
        let array = try #require(parseError("[1 2]"))
        #expect(array.message == "unexpected '2': expected ',' or ']'")
        #expect(array.location == SourceLocation(line: 1, column: 4))
    }

    @Test func unterminatedContainersAndStrings() throws {
        #expect(parseError("{\"a\": 1")?.message == "unexpected end of input: expected ',' or '}'")
        #expect(parseError("[1")?.message == "unexpected end of input: expected ',' or ']'")
        #expect(parseError("{")?.message == "unexpected end of input: expected a key or '}'")
        let string = try #require(parseError("\n  \"abc"))
        #expect(string.message == "unterminated string")
        #expect(string.location == SourceLocation(line: 2, column: 3))
        #expect(parseError("\"a\\")?.message == "unterminated string")
    }

    @Test func duplicateKeyPointsAtTheSecondKey() throws {
        let error = try #require(parseError("{\n  \"apps\": {\n    \"x\": 1,\n    \"x\": 2\n  }\n}"))
        #expect(error.message == "duplicate key \"x\": an object may say each key once")
        #expect(error.location == SourceLocation(line: 4, column: 5))
        #expect(error.path.description == "apps.x")
    }

    /// Swift compares keys by canonical equivalence, so one spelled in two Unicode forms is a
    /// duplicate a dictionary cannot hold: the error says so and spells out both, in either
    /// order, in small and large objects, escaped in the source or not.
    @Test(arguments: [("caf\u{E9}", "cafe\u{301}", #"caf\u00e9"#, #"cafe\u0301"#),
                      ("cafe\u{301}", "caf\u{E9}", #"cafe\u0301"#, #"caf\u00e9"#),
                      ("\u{212A}", "K", #"\u212a"#, "K"),
                      ("\u{1D15E}\"", "\u{1D157}\u{1D165}\"", #"\ud834\udd5e\""#, #"\ud834\udd57\ud834\udd65\""#)])
    func keyInAnotherUnicodeFormIsADuplicate(_ first: String, _ second: String, _ firstShown: String, _ secondShown: String) throws {
        let expected = "duplicate key \"\(secondShown)\": the earlier key \"\(firstShown)\" in another Unicode form; "
            + "an object may say each key once"
        func quoted(_ key: String) -> String { key.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: #"\""#) }
        let error = try #require(parseError("{\"config\": {\n  \"\(quoted(first))\": 1,\n  \"\(quoted(second))\": 2\n}}"))
        #expect(error.message == expected)
        #expect(error.location == SourceLocation(line: 3, column: 3))
        #expect(error.path == JSONPath([.key("config"), .key(second)]))
        let many = (0..<20).map { "\"k\($0)\": \($0)" }.joined(separator: ", ")
        let escaped = "{\"\(firstShown)\": 1, \(many), \"\(secondShown)\": 2}"
        #expect(parseError(escaped)?.message == expected)
    }

    /// Only canonical equivalence makes a duplicate: a compatibility form ("ﬁ", U+FB01) or a
    /// different accent is another key.
    @Test func keysThatOnlyLookAlikeAreDistinct() throws {
        let parsed = try JSONParser.parse("{\"\u{FB01}\": 1, \"fi\": 2, \"caf\u{E9}\": 3, \"caf\u{E8}\": 4, \"cafe\u{300}\u{301}\": 5}")
        #expect(parsed.objectValue?.count == 5)
    }

    /// Large objects find duplicates through a set of their keys, small ones by comparing.
    @Test(arguments: [2, 8, 9, 40])
    func duplicateKeyInAnObjectOfManyMembers(_ memberCount: Int) throws {
        let members = (0..<memberCount).map { "\"k\($0)\": \($0)" } + ["\"k\(memberCount / 2)\": true"]
        let error = try #require(parseError("{\"o\": {" + members.joined(separator: ", ") + "}}"))
        #expect(error.message == "duplicate key \"k\(memberCount / 2)\": an object may say each key once")
        #expect(error.path.description == "o.k\(memberCount / 2)")
        let distinct = (0..<memberCount).map { "\"k\($0)\": [\($0), {\"k\($0)\": 1}]" }
        let parsed = try JSONParser.parse("{\"o\": {" + distinct.joined(separator: ", ") + "}}")
        #expect(parsed["o"]?.objectValue?.count == memberCount)
        #expect(parsed["o"]?["k\(memberCount - 1)"] == [.number(memberCount - 1), ["k\(memberCount - 1)": 1]])
    }

    @Test func depthLimit() throws {
        let error = try #require(parseError("[[[[1]]]]", maxDepth: 3))
        #expect(error.message == "nesting deeper than 3 levels")
        #expect(error.location == SourceLocation(line: 1, column: 4))
        // Hostile depth is refused, not a stack overflow.
        let hostile = String(repeating: "[", count: 100_000)
        #expect(parseError(hostile)?.message == "nesting deeper than \(JSONParser.defaultMaxDepth) levels")
    }

    @Test func invalidLiterals() throws {
        let error = try #require(parseError("[tru]"))
        #expect(error.message == "invalid literal: expected 'true'")
        #expect(error.location == SourceLocation(line: 1, column: 2))
        #expect(parseError("nul")?.message == "invalid literal: expected 'null'")
        #expect(parseError("True")?.message == "unexpected 'T': expected a value")
    }

    @Test func invalidNumbers() throws {
        #expect(parseError("01")?.message == "invalid number: leading zero")
        #expect(parseError("-")?.message == "invalid number: expected a digit")
        #expect(parseError("1.")?.message == "invalid number: expected a digit after '.'")
        #expect(parseError("1e+")?.message == "invalid number: expected a digit in the exponent")
        #expect(parseError("+1")?.message == "unexpected '+': expected a value")
        let range = try #require(parseError("[1e400]"))
        #expect(range.message == "number out of range")
        #expect(range.location == SourceLocation(line: 1, column: 2))
    }

    @Test func invalidEscapes() throws {
        let error = try #require(parseError("\"ab\\x\""))
        #expect(error.message == "invalid escape '\\x' in a string")
        #expect(error.location == SourceLocation(line: 1, column: 4))
        #expect(parseError("\"\\u12G4\"")?.message == "invalid hex digit in a \\u escape")
        #expect(parseError("\"\\u12")?.message == "unterminated \\u escape")
    }

    @Test func unpairedSurrogates() throws {
        #expect(parseError(#""\ud83d""#)?.message == "unpaired surrogate \\ud83d in a string")
        #expect(parseError(#""\ud83dx""#)?.message == "unpaired surrogate \\ud83d in a string")
        #expect(parseError(#""\ude00""#)?.message == "unpaired surrogate \\ude00 in a string")
        #expect(parseError(#""\ud83d\u0041""#)?.message == "invalid low surrogate in a string")
    }

    @Test func controlCharactersMustBeEscaped() throws {
        let raw = try #require(parseError("\"a\tb\""))
        #expect(raw.message == "control character (byte 0x9) in a string: escape it")
        #expect(raw.location == SourceLocation(line: 1, column: 3))
        // The same after an escape (the slow path).
        #expect(parseError("\"\\n\u{1}\"")?.message == "control character (byte 0x1) in a string: escape it")
    }

    @Test func invalidUTF8() throws {
        // A lone continuation byte, an overlong '/', a UTF-8-encoded surrogate, a truncated sequence.
        for bad: [UInt8] in [[0x80], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xE2, 0x82]] {
            let error = try #require(parseError([0x20, 0x22] + bad + [0x22]))
            #expect(error.message == "invalid UTF-8 in a string")
            #expect(error.location == SourceLocation(line: 1, column: 2))
            // Also after an escape.
            #expect(parseError([0x22, 0x5C, 0x6E] + bad + [0x22])?.message == "invalid UTF-8 in a string")
        }
        #expect(parseError([0xFF])?.message == "unexpected byte 0xFF: expected a value")
    }

    @Test func byteOrderMarkIsNamed() throws {
        let error = try #require(parseError([0xEF, 0xBB, 0xBF] + Array("{}".utf8)))
        #expect(error.message == "the document starts with a UTF-8 byte-order mark (EF BB BF), which JSON does not allow: save it without one")
        #expect(error.location == SourceLocation(line: 1, column: 1))
    }

    @Test func columnsCountCharactersNotBytes() throws {
        let error = try #require(parseError("{\"é😀\": x}"))
        #expect(error.location == SourceLocation(line: 1, column: 8))
    }
}

@Suite struct JSONDocumentTests {
    @Test func locatesMembersByTheirKeyAndElementsByTheirStart() throws {
        let text = "{\n  \"apps\": {\n    \"com.example.notes\": { \"users\": [\"a\", \"b\"] }\n  }\n}"
        let document = try JSONParser.parseDocument(Array(text.utf8))
        let app = JSONPath.root.appending("apps").appending("com.example.notes")
        #expect(document.location(of: app) == SourceLocation(line: 3, column: 5))
        #expect(document.location(of: app.appending("users").appending(index: 1)) == SourceLocation(line: 3, column: 43))
        // A path the document lacks falls back to its nearest ancestor.
        #expect(document.location(of: app.appending("dlp").appending("print")) == SourceLocation(line: 3, column: 5))
        #expect(document.location(of: .root) == SourceLocation(line: 1, column: 1))
    }

    @Test func pathsRenderAsAnAdministratorTypesThem() {
        let path = JSONPath([.key("apps"), .key("com.example.notes"), .key("dlp"), .key("clipboard"), .key("level")])
        #expect(path.description == #"apps["com.example.notes"].dlp.clipboard.level"#)
        #expect(JSONPath([.key("a"), .index(3), .key("with \"quote\"")]).description == #"a[3]["with \"quote\""]"#)
        #expect(JSONPath.root.description == "(document)")
    }
}
