import Testing
import JSONCore

@Suite struct JSONSerializationTests {
    @Test func sortsKeysByUTF8BytesAndDropsWhiteSpace() {
        let value: JSONValue = ["b": 1, "a": ["z": true, "Z": false], "é": nil, "aa": []]
        #expect(value.serializedString() == #"{"a":{"Z":false,"z":true},"aa":[],"b":1,"é":null}"#)
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
}
