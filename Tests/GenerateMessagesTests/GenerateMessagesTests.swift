import Foundation
import Testing
import TestSupport

/// The message generator run as the build runs it: what it writes for an interface it can map,
/// and, for one it cannot, a refusal naming the file, the line and what was expected (the
/// build log shows it and the build fails). The generated types of the real interfaces are
/// checked against them in ProctorProtocolTests.
@Suite struct GenerateMessagesTests {
    static let mapping = """
        import Foundation

        interface org.example.Shop Shop ShopMethod
        use Money Int
        field Buy.Request.item ItemCode
        shared ItemRequest Buy.Request Hold.Request
        """

    static let interface = """
        # A shop.
        interface org.example.Shop

        # An amount in cents.
        type Money (cents: int)

        # A line of a receipt.
        type Line (item: string, price: Money, note: ?string, kind: (sale, refund))

        # Buys one item.
        method Buy(item: string, gift: ?bool) -> (lines: []Line, total: Money)

        method Hold(item: string) -> ()

        type Shelf (
          # Where it stands.
          aisle: int
        )
        """

    /// Runs the built generator over `interface` and `mapping`: its exit status, error output
    /// (the temporary directory's path left out) and the file it wrote for the interface.
    static func generate(interface: String = interface, mapping: String = mapping) throws
        -> (status: Int32, error: String, swift: String?)
    {
        let directory = try TemporaryDirectory(prefix: "generate-messages")
        let mappingPath = try directory.write("SwiftMapping.txt", mapping)
        let interfacePath = try directory.write("org.example.Shop.varlink", interface)
        let generator = try ChildProcess(try BuiltProducts.executable("generate-messages"),
                                         arguments: [mappingPath, directory.path, interfacePath])
        let status = try generator.waitForExit()
        let swift = try? String(contentsOf: directory.appending("org.example.Shop.swift"), encoding: .utf8)
        return (status, generator.errorOutput.replacingOccurrences(of: directory.path + "/", with: ""), swift)
    }

    /// The Swift the generator writes for `interface` and `mapping`, which it must accept.
    static func generatedSource(interface: String = interface, mapping: String = mapping) throws -> String {
        let (status, error, swift) = try generate(interface: interface, mapping: mapping)
        #expect(status == 0, "\(error)")
        return try #require(swift)
    }

    @Test func writesAStructPerTypeAndMessageAndAnEnumPerMethod() throws {
        let source = try Self.generatedSource()
        for expected in [
            "public protocol ShopMethod: ProtocolMethod {}",
            "/// A line of a receipt.\n    public struct Line: ProtocolMessage {",
            "public enum Kind: String, Sendable, CaseIterable, Codable {\n            case sale, refund",
            "public init(item: String, price: Int, note: String? = nil, kind: Kind) {",
            "/// Buys one item.\n    public enum Buy: ShopMethod {",
            "public struct ItemRequest: ProtocolMessage {\n        public var item: ItemCode\n        public var gift: Bool?",
            "public typealias Request = ItemRequest",
            "public typealias Reply = NoFields",
            "public init(lines: [Line], total: Int) {",
            "public struct Shelf: ProtocolMessage {\n        /// Where it stands.\n        public var aisle: Int\n",
            "public static let methods: [any ProtocolMethod.Type] = [\n        Buy.self,\n        Hold.self,\n    ]",
        ] {
            #expect(source.contains(expected), "\(expected)")
        }
        #expect(!source.contains("struct Money"), "a type the mapping takes from elsewhere is not generated")
    }

    /// Every `#` comment the interface puts above a type, method or field — inside a method's
    /// parameters or reply too — becomes the doc comment of what the generator writes for it,
    /// line for line; a comment a blank line separates from the next declaration documents
    /// nothing. A field of a shared or grouped message shows whichever member documents it.
    @Test func carriesTheInterfaceCommentsIntoDocComments() throws {
        let interface = """
            interface org.example.Shop

            # Not about anything: a blank line follows.

            # A line of a receipt.
            #
            # Refunds are negative.
            type Line (
              # What was sold,
              # by its code.
              item: string,
              price: int,
              # How the line came about.
              kind: (sale, refund)
            )

            # Buys one item.
            method Buy(
              # The item's code.
              item: string,
              reason: ?string
            ) -> (
              # The till's number.
              till: int,
              lines: []Line
            )

            method Hold(item: string) -> (
              till: int,
              # Until when it is held.
              until: string
            )

            method Return(
              item: string,
              # Why it came back.
              reason: ?string
            ) -> ()
            """
        let mapping = """
            interface org.example.Shop Shop ShopMethod
            shared ItemRequest Buy.Request Return.Request
            group Till till in Buy.Reply Hold.Reply : till
            """
        let source = try Self.generatedSource(interface: interface, mapping: mapping)
        for expected in [
            "    /// A line of a receipt.\n    ///\n    /// Refunds are negative.\n    public struct Line: ProtocolMessage {\n",
            "        /// The values of `kind`.\n        public enum Kind: String",
            "        /// What was sold,\n        /// by its code.\n        public var item: String\n        public var price: Int\n",
            "        /// How the line came about.\n        public var kind: Kind\n",
            "    /// Buys one item.\n    public enum Buy: ShopMethod {",
            "        /// The item's code.\n        public var item: String\n        /// Why it came back.\n        public var reason: String?\n",
            "    public struct Till: ProtocolMessage {\n        /// The till's number.\n        public var till: Int\n",
            "            /// The fields of `Till`, sent as this message's own.\n            public var till: Till\n",
            "            /// Until when it is held.\n            public var until: String\n",
        ] {
            #expect(source.contains(expected), "\(expected)")
        }
        #expect(!source.contains("Not about anything"))
    }

    /// Each case changes one thing in the interface: what it replaces, by what, then the line
    /// and message of the refusal.
    @Test(arguments: [
        ("note: ?string", "note: (text: string)", 8,
         "`note` of Line is an anonymous struct, which has no Swift name; expected a type declared with `type NAME (…)` and named here"),
        ("method Hold(item: string)", "method Hold(item: int)", 13,
         "field `item` of Hold's parameters differs from ItemRequest's (shared in SwiftMapping.txt:6); expected the same name and type"),
        ("method Hold(item: string)", "method Hold(count: ?int)", 13,
         "field `count` of Hold's parameters differs from ItemRequest's (shared in SwiftMapping.txt:6); expected the same name and type"),
        ("price: Money", "price: Cost", 8,
         "`price` of Line has the type Cost, which org.example.Shop does not declare; expected a type declared with `type Cost (…)`"),
        ("-> ()", "-> (sold, held)", 13, "method Hold's reply is an enum; expected a struct such as (name: string)"),
        ("interface org.example.Shop", "interface org.example.Store", 1,
         "SwiftMapping.txt has no `interface org.example.Store SWIFT-NAMESPACE METHOD-PROTOCOL` line; expected one for every interface file"),
    ])
    func refusesAnInterfaceItCannotMapNamingFileAndLine(replacing: String, by: String, line: Int, message: String) throws {
        let (status, error, swift) = try Self.generate(interface: Self.interface.replacingOccurrences(of: replacing, with: by))
        #expect(status == 1)
        #expect(error == "org.example.Shop.varlink:\(line): error: \(message)\n")
        #expect(swift == nil)
    }

    @Test(arguments: [
        ("field Buy.Request.price Int", "SwiftMapping.txt:5: error: `field`: ItemRequest has no field `price`"),
        ("field Sell.Request.item ItemCode",
         "SwiftMapping.txt:5: error: `field`: org.example.Shop has no message Sell.Request; expected a struct type, Method.Request or Method.Reply"),
        ("use Cost Int", "SwiftMapping.txt:5: error: `use Cost`: org.example.Shop declares no type Cost"),
        ("group Receipt receipt in Buy.Reply : lines cost",
         "org.example.Shop.varlink:11: error: Buy.Reply lacks `cost`, a field of the group Receipt (SwiftMapping.txt:5)"),
        ("mirror Buy.Reply.total lines", "SwiftMapping.txt:5: error: `mirror`: Buy.Reply has no field `lines` of the type of `total`"),
        ("rename Buy Purchase", "SwiftMapping.txt:5: error: unknown directive `rename`; expected import, interface, use, field, shared, group or mirror"),
    ])
    func refusesAMappingLineThatDoesNotFitTheInterface(line: String, message: String) throws {
        let mapping = Self.mapping.replacingOccurrences(of: "field Buy.Request.item ItemCode", with: line)
        let (status, error, _) = try Self.generate(mapping: mapping)
        #expect(status == 1)
        #expect(error == message + "\n")
    }
}
