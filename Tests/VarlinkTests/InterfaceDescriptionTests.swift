import JSONCore
import Testing
@testable import Varlink

@Suite struct InterfaceDescriptionTests {
    static let example = """
        # An interface using every kind of type.
        interface org.example.more-types

        type Color (red, green, blue)   # an enum

        type Item (
          name: string,
          count: int,
          weight: ?float,
          tags: []string,
          labels: [string]string,
          color: Color,
          extra: object,
          inner: (flag: bool, mode: (fast, slow))
        )

        # Stores items.
        method Put(items: []Item, note: ?string) -> (stored: int)
        method Get(name: string) -> (item: ?Item)
        method Nothing() -> ()

        error NoSuchItem (name: string)
        error Broken ()
        """

    @Test func parsesTheServiceInterface() throws {
        let service = try VarlinkInterfaceDescription(parsing: VarlinkServiceInterface.text)
        #expect(service.name == "org.varlink.service")
        #expect(Set(service.methods.keys) == ["GetInfo", "GetInterfaceDescription"])
        #expect(service.methods["GetInfo"]?.output.map(\.name) == ["vendor", "product", "version", "url", "interfaces"])
        #expect(service.methods["GetInfo"]?.output.last?.type == .array(.string))
        #expect(Set(service.errors.keys) == ["InterfaceNotFound", "MethodNotFound", "MethodNotImplemented",
                                              "InvalidParameter", "PermissionDenied", "ExpectedMore"])
        #expect(service.text == VarlinkServiceInterface.text)
    }

    @Test func parsesEveryKindOfType() throws {
        let description = try VarlinkInterfaceDescription(parsing: Self.example)
        #expect(description.name == "org.example.more-types")
        #expect(description.types["Color"] == .enum(["red", "green", "blue"]))
        guard case .struct(let fields) = description.types["Item"] else { Issue.record("Item is not a struct"); return }
        #expect(fields.map(\.type) == [.string, .int, .maybe(.float), .array(.string), .map(.string), .named("Color"),
                                       .object, .struct([VarlinkField(name: "flag", type: .bool),
                                                         VarlinkField(name: "mode", type: .enum(["fast", "slow"]))])])
        #expect(description.methods["Put"]?.input.map(\.type) == [.array(.named("Item")), .maybe(.string)])
        #expect(description.methods["Nothing"]?.input.isEmpty == true)
        #expect(description.errors["NoSuchItem"] == [VarlinkField(name: "name", type: .string)])
    }

    @Test(arguments: [
        ("method A() -> ()", "line 1, column 1: expected 'interface'"),
        ("interface foo\nmethod A() -> ()", "line 1, column 11: foo is not a valid interface name"),
        ("interface a.-b\nmethod A() -> ()", "line 1, column 11: a.-b is not a valid interface name"),
        ("interface a.b\n", "line 2, column 1: the interface defines no type, method or error"),
        ("interface a.b\nmethod lower() -> ()", "line 2, column 8: lower is not a valid method name (an upper-case letter, then letters and digits)"),
        ("interface a.b\nmethod A(x: Missing) -> ()", "line 2, column 13: unknown type Missing"),
        ("interface a.b\nmethod A() -> ()\nerror A ()", "line 3, column 7: A is defined twice"),
        ("interface a.b\nmethod A() ()", "line 2, column 12: expected '->' after the input of method A"),
        ("interface a.b\nmethod A(x: ??string) -> ()", "line 2, column 14: '?' cannot apply to an optional type"),
        ("interface a.b\nmethod A(x: string, x: int) -> ()", "line 2, column 21: field x appears twice"),
        ("interface a.b\nmethod A(x string) -> ()", "line 2, column 12: expected ':' after the field name x"),
        ("interface a.b\nmethod A(x: [int]string) -> ()", "line 2, column 14: expected 'string' in a map type '[string]T'"),
        ("interface a.b\nmethod A(bad__name: int) -> ()", "line 2, column 10: bad__name is not a valid field name"),
        ("interface a.b\nfunction A() -> ()", "line 2, column 1: expected 'type', 'method' or 'error'"),
        ("interface a.b\ntype E (a, b, a)", "line 2, column 15: enum value a appears twice"),
        ("interface a.b\nmethod A(x: int -> ()", "line 2, column 17: expected ',' or ')' after the field x"),
        ("interface a.b\nmethod A(x: " + String(repeating: "[]", count: 100) + "int) -> ()",
         "line 2, column 141: types nested deeper than 64 levels"),
    ])
    func rejectsMalformedDefinitions(text: String, message: String) {
        #expect {
            _ = try VarlinkInterfaceDescription(parsing: text)
        } throws: { error in
            (error as? VarlinkInterfaceParseError)?.description == message
        }
    }

    @Test func parameterChecks() throws {
        let description = try VarlinkInterfaceDescription(parsing: Self.example)
        let put = try #require(description.methods["Put"])
        let item: JSONValue = ["name": "a", "count": 2, "tags": ["x"], "labels": ["k": "v"], "color": "red",
                               "extra": ["any": [1, 2]], "inner": ["flag": true, "mode": "fast"]]
        #expect(description.invalidParameter(in: ["items": [item]], of: put) == nil)
        #expect(description.invalidParameter(in: ["items": [], "note": nil], of: put) == nil)
        #expect(description.invalidParameter(in: ["items": [], "note": "n"], of: put) == nil)
        #expect(description.invalidParameter(in: [:], of: put) == "items")
        #expect(description.invalidParameter(in: ["items": [], "bogus": 1], of: put) == "bogus")
        #expect(description.invalidParameter(in: ["items": [], "note": 3], of: put) == "note")
        #expect(description.invalidParameter(in: ["items": nil], of: put) == "items")
        var wrong = item.objectValue!
        for (key, value) in [("count", JSONValue.number(2.5)), ("color", "purple"), ("labels", ["k": 1]),
                             ("extra", "text"), ("inner", ["flag": true, "mode": "slow", "more": 1]), ("weight", "heavy")] {
            wrong = item.objectValue!
            wrong[key] = value
            #expect(description.invalidParameter(in: ["items": [.object(wrong)]], of: put) == "items", "\(key)")
        }
        wrong = item.objectValue!
        wrong["name"] = nil
        #expect(description.invalidParameter(in: ["items": [.object(wrong)]], of: put) == "items")
        wrong = item.objectValue!
        wrong["weight"] = 1
        #expect(description.invalidParameter(in: ["items": [.object(wrong)]], of: put) == nil)
    }

    /// Several faults in one call: the declared parameters first, in their order, then the
    /// unknown one first by its bytes — the same name however the dictionary is ordered, so
    /// the same call always gets the same reply.
    @Test func severalFaultsAlwaysNameTheSameParameter() throws {
        let description = try VarlinkInterfaceDescription(parsing: Self.example)
        let put = try #require(description.methods["Put"])
        for _ in 0..<20 {
            // Parsed anew each time: a dictionary's order may differ from one to the next.
            let unknown = try JSONParser.parse(Array(#"{"items": [], "zz": 1, "bogus": 2, "b": 3, "note": 3}"#.utf8))
            #expect(description.invalidParameter(in: unknown.objectValue!, of: put) == "note")
            let wrongAndUnknown = try JSONParser.parse(Array(#"{"zz": 1, "items": 3, "bogus": 2}"#.utf8))
            #expect(description.invalidParameter(in: wrongAndUnknown.objectValue!, of: put) == "items")
            let onlyUnknown = try JSONParser.parse(Array(#"{"items": [], "zz": 1, "bogus": 2, "bé": 3}"#.utf8))
            #expect(description.invalidParameter(in: onlyUnknown.objectValue!, of: put) == "bogus")
        }
    }

    @Test func interfaceNames() {
        #expect(VarlinkNames.isInterfaceName("io.proctor.Agent"))
        #expect(VarlinkNames.isInterfaceName("org.example.more-types"))
        #expect(VarlinkNames.isInterfaceName("a.b1"))
        for bad in ["io", "io.", ".io", "1a.b", "a.b-", "a..b", "a.b_c", "a.b c"] {
            #expect(!VarlinkNames.isInterfaceName(bad), "\(bad)")
        }
    }
}
