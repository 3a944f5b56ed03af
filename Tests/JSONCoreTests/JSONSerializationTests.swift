import Testing
import JSONCore

@Suite struct JSONSerializationTests {
    @Test func sortsKeysByUTF8BytesAndDropsWhiteSpace() {
        let value: JSONValue = ["b": 1, "a": ["z": true, "Z": false], "é": nil, "aa": []]
        #expect(value.serializedString() == #"{"a":{"Z":false,"z":true},"aa":[],"b":1,"é":null}"#)
    }

    @Test func hasSameBytesIsEqualityThatSerialisesAlike() {
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        let pairs: [(JSONValue, JSONValue)] = [
            (.string(composed), .string(decomposed)),
            (["k": .string(composed)], ["k": .string(decomposed)]),
            ([.string(composed)], [.string(decomposed)]),
            (.object([composed: 1]), .object([decomposed: 1])),
        ]
        for (mine, theirs) in pairs {
            #expect(mine == theirs, "String's == is canonical equivalence")
            #expect(!mine.serializedString().utf8.elementsEqual(theirs.serializedString().utf8))
            #expect(!mine.hasSameBytes(as: theirs) && !theirs.hasSameBytes(as: mine))
            #expect(mine.hasSameBytes(as: mine))
        }
        let value: JSONValue = ["a": [1, "x", nil, true, ["b": 2.5]]]
        #expect(value.hasSameBytes(as: ["a": [1, "x", nil, true, ["b": 2.5]]]))
        #expect(!value.hasSameBytes(as: ["a": [1, "x", nil, false, ["b": 2.5]]]))
        #expect(!value.hasSameBytes(as: ["a": [1, "x", nil, true, ["b": 2.5], 3]]))
        #expect(!JSONValue.number(1).hasSameBytes(as: .string("1")))
    }

    @Test func escapesWhatJSONRequires() {
        let value: JSONValue = .string("q\"b\\n\nr\rt\t\u{1}\u{1F}/é")
        #expect(value.serializedString() == #""q\"b\\n\nr\rt\t\u0001\u001f/é""#)
    }

    @Test func writesIntegersWithoutAFractionAndOthersExactly() {
        #expect(JSONValue.number(42).serializedString() == "42")
        #expect(JSONValue.number(-7).serializedString() == "-7")
        #expect(JSONValue.number(-0.0).serializedString() == "0")
        #expect(JSONValue.number(2.5).serializedString() == "2.5")
        #expect(JSONValue.number(1e300).serializedString() == "1e+300")
    }

    @Test(arguments: [
        #"{"a":[1,2.5,-3,true,false,null],"b":{"c":"d\n😀"},"e":""}"#,
        #"[[],{},[[{}]],"\u0000"]"#,
        #"{"apps":{"com.example.notes":{"dlp":{"clipboard":{"charLimit":0,"level":"managed"}}}}}"#,
    ])
    func roundTrips(_ text: String) throws {
        let value = try JSONParser.parse(text)
        let bytes = value.serialized()
        #expect(try JSONParser.parse(bytes) == value)
        // Canonical output is a fixed point.
        #expect(try JSONParser.parse(bytes).serialized() == bytes)
    }

    @Test func sameValueSameBytesWhateverTheInputOrder() throws {
        let one = try JSONParser.parse("{ \"b\" : [1, {\"y\":1, \"x\":2}], \"a\": \"s\" }")
        let two = try JSONParser.parse("{\"a\":\"s\",\n\"b\":[1,{\"x\":2,\"y\":1}]}")
        #expect(one.serialized() == two.serialized())
        #expect(one.serializedString() == #"{"a":"s","b":[1,{"x":2,"y":1}]}"#)
    }

    /// The writer tests eight bytes at a time: every character that needs an escape, and its
    /// neighbours that do not, at every offset in and across words, alone and in pairs.
    @Test func escapesTheSameAtEveryOffsetInAWord() {
        let probes: [Unicode.Scalar] = ["\u{0}", "\u{1}", "\t", "\n", "\r", "\u{1F}", " ", "!", "\"", "#",
                                        "[", "\\", "]", "\u{7F}", "é", "€", "𝄞"]
        for length in 0..<19 {
            for first in 0...length {
                for probe in probes {
                    for second in [nil, probe, "\"", "\u{0}"] as [Unicode.Scalar?] {
                        var scalars = Array(repeating: Unicode.Scalar("a"), count: length)
                        scalars.insert(probe, at: first)
                        if let second { scalars.insert(second, at: (first + 3) % (scalars.count + 1)) }
                        var text = ""
                        text.unicodeScalars.append(contentsOf: scalars)
                        var written: [UInt8] = []
                        JSONValue.writeString(text, to: &written)
                        #expect(String(decoding: written, as: UTF8.self) == Self.escapedOneByOne(text), "\(scalars)")
                    }
                }
            }
        }
    }

    /// JSON's escaping a character at a time, as the writer did before it scanned by words.
    private static func escapedOneByOne(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
