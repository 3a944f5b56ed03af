import JSONCore
import ProctorPolicy
@testable import ProctorProtocol
import Testing
import Varlink

/// Every message type agrees with the interface files: a message built from the interface's
/// own declaration of a method's parameters (or reply) reads into the type and writes back
/// unchanged, with every optional field given and with none. A field the type spells
/// differently from the interface, leaves out or adds makes these fail.
@Suite struct MessageConformanceTests {
    static let interfaces: [(name: String, methods: [any ProtocolMethod.Type])] = [
        (Agent.interface, Agent.methods), (Admin.interface, Admin.methods),
    ]

    static func description(of name: String) throws -> VarlinkInterfaceDescription {
        try VarlinkInterfaceDescription(parsing: try ProtocolInterfaces.text(of: name))
    }

    @Test func everyInterfaceFileIsBuiltIn() {
        #expect(ProtocolInterfaces.names == ["io.proctor.Admin", "io.proctor.Agent"])
    }

    @Test(arguments: interfaces.map(\.name))
    func everyMethodOfTheInterfaceHasTypes(interface: String) throws {
        let methods = Self.interfaces.first { $0.name == interface }!.methods
        #expect(methods.map { $0.name }.sorted() == (try Self.description(of: interface)).methods.keys.sorted())
        #expect(methods.allSatisfy { $0.interface == interface })
    }

    @Test(arguments: interfaces.map(\.name))
    func requestsAndRepliesCarryExactlyTheDeclaredFields(interface: String) throws {
        let description = try Self.description(of: interface)
        for method in Self.interfaces.first(where: { $0.name == interface })!.methods {
            let signature = try #require(description.methods[method.name])
            for withOptionals in [true, false] {
                var sample = SampleBuilder(types: description.types, withOptionals: withOptionals)
                let input = sample.object(signature.input)
                let output = sample.object(signature.output)
                let (request, reply) = try Self.roundTrip(method, input: input, output: output)
                #expect(request == Self.withoutNulls(input),
                        "\(method.qualifiedName) parameters, optionals \(withOptionals ? "given" : "absent")")
                #expect(reply == Self.withoutNulls(output),
                        "\(method.qualifiedName) reply, optionals \(withOptionals ? "given" : "absent")")
            }
        }
    }

    /// The struct types of each interface (generated from it), each on its own: read and
    /// written back unchanged, and none left out.
    @Test(arguments: interfaces.map(\.name))
    func everyDeclaredStructTypeReadsAndWritesBackItsFields(interface: String) throws {
        let description = try Self.description(of: interface)
        let generated = interface == Agent.interface ? Agent.declaredMessages : Admin.declaredMessages
        // Types the mapping takes from ProctorPolicy are enums; every struct type is generated.
        let structs = description.types.filter { if case .struct = $0.value { true } else { false } }
        #expect(generated.keys.sorted() == structs.keys.sorted())
        for (name, type) in structs {
            guard case .struct(let fields) = type, let message = generated[name] else { continue }
            for withOptionals in [true, false] {
                var sample = SampleBuilder(types: description.types, withOptionals: withOptionals)
                let fields = sample.object(fields)
                #expect(Self.withoutNulls(.object(try message.init(fields).fields)) == Self.withoutNulls(fields),
                        "\(interface).\(name), optionals \(withOptionals ? "given" : "absent")")
            }
        }
    }

    /// The method's parameters and reply read into its types and written back.
    static func roundTrip<Method: ProtocolMethod>(_ method: Method.Type, input: [String: JSONValue],
                                                  output: [String: JSONValue]) throws -> (JSONValue, JSONValue) {
        (withoutNulls(.object(try Method.Request(input).fields)), withoutNulls(.object(try Method.Reply(output).fields)))
    }

    /// Varlink treats an absent optional and a null one alike.
    static func withoutNulls(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let members): .object(members.filter { !$0.value.isNull }.mapValues(withoutNulls))
        case .array(let elements): .array(elements.map(withoutNulls))
        default: value
        }
    }

    static func withoutNulls(_ members: [String: JSONValue]) -> JSONValue { withoutNulls(.object(members)) }

    @Test func everyErrorTheTypesBuildIsDeclaredWithItsParameters() throws {
        let errors: [VarlinkError] = [
            AgentError.unknownApp("a"), AgentError.identityMismatch("a", "r"), AgentError.invalidSession("s"),
            AgentError.invalidParameter("p", "r"), AgentError.storageFailure("m"),
            AdminError.versionConflict(expected: "1", current: "2"),
            AdminError.invalidPolicy([PolicyProblem(message: "bad")]), AdminError.unknownApp("a"),
            AdminError.bundleRefused(reason: "rollback", message: "m"), AdminError.unknownVersion("1"), AdminError.invalidParameter("p", "r"), AdminError.storageFailure("m"),
        ]
        for error in errors {
            let description = try Self.description(of: error.interfaceName)
            let name = String(error.name.split(separator: ".").last!)
            let declared = try #require(description.errors[name], "\(error.name) is not declared")
            #expect(Set(error.parameters.keys) == Set(declared.map(\.name)), "\(error.name)")
            for field in declared {
                let value = try #require(error.parameters[field.name])
                #expect(value.typeDescription == SampleBuilder(types: description.types, withOptionals: true)
                    .sampleTypeDescription(field.type), "\(error.name).\(field.name)")
            }
        }
    }

    @Test func aMalformedReplyNamesTheFieldByItsPath() {
        #expect(throws: MalformedMessage(field: "version", reason: "is a number, expected a string")) {
            try Admin.Status.Reply(["version": 1])
        }
        #expect(throws: MalformedMessage(field: "apps[0].appId", reason: "is a number, expected a string")) {
            try Admin.ListApps.Reply(["apps": [["appId": 7]]])
        }
        #expect(throws: MalformedMessage(field: "reason", reason: "is \"later\", expected one of current, policy, wipe, notification, refresh")) {
            _ = try Agent.Subscribe.Reply(["reason": "later"])
        }
    }

    @Test func aRequestTheInterfaceAcceptsButTheDaemonCannotIsThatInterfacesInvalidParameter() {
        #expect(throws: AgentError.invalidParameter("action", "is \"fly\", expected one of "
            + Action.allCases.map(\.rawValue).joined(separator: ", "))) {
            _ = try Agent.Decide.request(["session": "s", "action": "fly"])
        }
        #expect(throws: AdminError.invalidParameter("appVersion", "\"two\" is not a semantic version such as 2.3.0")) {
            _ = try Admin.Decide.request(["appId": "a", "action": "launch", "appVersion": "two"])
        }
        #expect(throws: VarlinkError.self) {
            _ = try Agent.ReportEvent.request(["session": "s", "event": "didExplode"])
        }
    }

    @Test func aRequestTheDaemonAcceptsReadsIntoItsType() throws {
        let request = try Agent.ReportEvent.request(["session": "s", "event": "willTerminate"])
        #expect(request == Agent.ReportEvent.Request(session: "s", event: "willTerminate", detail: nil))
    }
}

/// Builds a JSON message from an interface's declaration: every field, with a value of its
/// type (and the values the daemon's own checks want for `action`, `event` and `appVersion`).
struct SampleBuilder {
    let types: [String: VarlinkType]
    let withOptionals: Bool

    mutating func object(_ fields: [VarlinkField]) -> [String: JSONValue] {
        var members: [String: JSONValue] = [:]
        for field in fields {
            if case .maybe = field.type, !withOptionals { continue }
            members[field.name] = value(field.type, name: field.name)
        }
        return members
    }

    mutating func value(_ type: VarlinkType, name: String) -> JSONValue {
        switch type {
        case .bool: return true
        case .int: return 3
        case .float: return 1.5
        case .string:
            switch name {
            case "action": return "clipboard.copy"
            case "event": return "didBecomeActive"
            case "appVersion": return "2.3.0"
            // Times are checked as RFC 3339; an Event's `at` repeats its `receivedAt`.
            case "at", "occurredAt", "receivedAt", "since", "until": return "2026-11-29T12:00:00Z"
            default: return .string("\(name)-text")
            }
        case .object: return ["key": "value"]
        case .array(let element): return [value(element, name: name)]
        case .map(let element): return ["key": value(element, name: name)]
        case .maybe(let wrapped): return value(wrapped, name: name)
        case .named(let typeName): return value(types[typeName]!, name: name)
        case .struct(let fields): return .object(object(fields))
        case .enum(let cases): return .string(cases.last!)
        }
    }

    func sampleTypeDescription(_ type: VarlinkType) -> String {
        switch type {
        case .bool: "a boolean"
        case .int, .float: "a number"
        case .string, .enum: "a string"
        case .object, .struct, .map: "an object"
        case .array: "an array"
        case .maybe(let wrapped): sampleTypeDescription(wrapped)
        case .named(let name): sampleTypeDescription(types[name]!)
        }
    }
}
