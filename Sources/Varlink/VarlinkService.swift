import JSONCore
import LinuxIO

/// What a service does for one method of one of its interfaces.
public struct VarlinkMethod<Context> {
    /// Calls without `more` are refused with `org.varlink.service.ExpectedMore` before the handler runs.
    public let requiresMore: Bool
    /// Gets the call (its parameters already checked against the interface), the connection's
    /// context (a class when handlers keep per-connection state, such as a session, in it)
    /// and the handle to answer through. A thrown error becomes the call's error reply
    /// unless the handle has already given its final reply.
    public let handler: (VarlinkCall, Context, VarlinkReplyHandle) throws(VarlinkError) -> Void

    public init(requiresMore: Bool = false,
                _ handler: @escaping (VarlinkCall, Context, VarlinkReplyHandle) throws(VarlinkError) -> Void) {
        self.requiresMore = requiresMore
        self.handler = handler
    }
}

/// Why an interface could not be added to a service.
public enum VarlinkServiceError: Error, Sendable, Hashable, CustomStringConvertible {
    case invalidInterface(VarlinkInterfaceParseError)
    case duplicateInterface(String)
    /// A handler was given for a method the interface does not define.
    case undefinedMethod(interface: String, method: String)

    public var description: String {
        switch self {
        case .invalidInterface(let error): "invalid interface definition: \(error)"
        case .duplicateInterface(let name): "interface \(name) is already provided"
        case .undefinedMethod(let interface, let method): "interface \(interface) defines no method \(method)"
        }
    }
}

/// A Varlink service: its interfaces and their method handlers, dispatching calls to them.
///
/// Answers `org.varlink.service.GetInfo` and `GetInterfaceDescription` itself. A call is
/// checked before any handler sees it: unknown interface → `InterfaceNotFound`, unknown
/// method → `MethodNotFound`, a caller the interface's admission refuses → its error,
/// defined but without a handler → `MethodNotImplemented`,
/// parameters not matching the method's input → `InvalidParameter` (naming the first bad
/// one), a streaming method called without `more` → `ExpectedMore`.
/// Use it from one thread (the event loop's).
public final class VarlinkService<Context> {
    public let vendor: String
    public let product: String
    public let version: String
    public let url: String

    /// Decides whether a caller may use an interface at all: throws (`PermissionDenied`,
    /// say) to refuse it.
    public typealias Admission = (Context) throws(VarlinkError) -> Void

    private struct Entry {
        let interface: VarlinkInterfaceDescription
        let signature: VarlinkMethodSignature
        let implementation: VarlinkMethod<Context>?
        let admission: Admission?
    }

    private var interfaces: [String: VarlinkInterfaceDescription] = [:]
    /// In the order they were added, for `GetInfo`.
    private var interfaceOrder: [String] = []
    /// Keyed by the fully qualified method name: one lookup per call on the hot path.
    private var entries: [String: Entry] = [:]
    /// The methods also answered from their call's bytes: the start of their plain calls
    /// (`VarlinkPlainCall.prefix(of:)`) and at the same index how to answer them.
    private var directPrefixes: [[UInt8]] = []
    private var directMethods: [(method: VarlinkDirectMethod<Context>, admission: Admission?)] = []
    /// Changes whenever a direct method is added or replaced, so connections bind them anew.
    private(set) var directMethodsGeneration = 0

    public init(vendor: String, product: String, version: String, url: String) {
        self.vendor = vendor
        self.product = product
        self.version = version
        self.url = url
        let serviceInterface: VarlinkInterfaceDescription
        do {
            serviceInterface = try VarlinkInterfaceDescription(parsing: VarlinkServiceInterface.text)
        } catch {
            preconditionFailure("the built-in org.varlink.service definition does not parse: \(error)")
        }
        add(serviceInterface, methods: [
            "GetInfo": VarlinkMethod { [unowned self] _, _, reply in reply.reply(self.info) },
            "GetInterfaceDescription": VarlinkMethod { [unowned self] call, _, reply throws(VarlinkError) in
                let name = call.parameters["interface"]?.stringValue ?? ""
                guard let interface = self.interfaces[name] else { throw .interfaceNotFound(name) }
                reply.reply(["description": .string(interface.text)])
            },
        ])
    }

    /// The names of all interfaces, `org.varlink.service` first.
    public var interfaceNames: [String] { interfaceOrder }

    /// The description of a provided interface.
    public func interface(named name: String) -> VarlinkInterfaceDescription? { interfaces[name] }

    /// Adds an interface from its definition text and its handlers, keyed by method name.
    /// Methods without a handler answer `MethodNotImplemented`. `admission`, when given,
    /// runs for every call of the interface before anything else looks at it (its
    /// parameters included), so a caller it refuses learns nothing more.
    @discardableResult
    public func addInterface(_ text: String, methods: [String: VarlinkMethod<Context>],
                             admission: Admission? = nil) throws(VarlinkServiceError)
        -> VarlinkInterfaceDescription
    {
        let interface: VarlinkInterfaceDescription
        do {
            interface = try VarlinkInterfaceDescription(parsing: text)
        } catch {
            throw .invalidInterface(error)
        }
        guard interfaces[interface.name] == nil else { throw .duplicateInterface(interface.name) }
        if let undefined = methods.keys.sorted().first(where: { interface.methods[$0] == nil }) {
            throw .undefinedMethod(interface: interface.name, method: undefined)
        }
        add(interface, methods: methods, admission: admission)
        return interface
    }

    private func add(_ interface: VarlinkInterfaceDescription, methods: [String: VarlinkMethod<Context>],
                     admission: Admission? = nil) {
        interfaces[interface.name] = interface
        interfaceOrder.append(interface.name)
        for (name, signature) in interface.methods {
            entries["\(interface.name).\(name)"] = Entry(interface: interface, signature: signature,
                                                         implementation: methods[name], admission: admission)
        }
    }

    /// Answers `method` (fully qualified) from the bytes of its calls when they come in their
    /// plain form (`VarlinkDirectMethod`); other calls of it still go to its handler, which
    /// must be there: the direct way is a shortcut to the same answer, not another method.
    public func addDirectMethod(_ method: String, _ direct: VarlinkDirectMethod<Context>) {
        guard let entry = entries[method], let implementation = entry.implementation, !implementation.requiresMore else {
            preconditionFailure("\(method): a direct method needs the same method with a handler that answers once")
        }
        let prefix = VarlinkPlainCall.prefix(of: method)
        if let index = directPrefixes.firstIndex(of: prefix) {
            directMethods[index] = (direct, entry.admission)
        } else {
            directPrefixes.append(prefix)
            directMethods.append((direct, entry.admission))
        }
        directMethodsGeneration += 1
    }

    /// The direct methods, in `directPrefixes`' order, bound to one connection's `context`;
    /// nil when there are none.
    func directMethods(boundTo context: Context) -> VarlinkBoundDirectMethod? {
        var first: VarlinkBoundDirectMethod?
        for (prefix, direct) in zip(directPrefixes, directMethods).reversed() {
            first = VarlinkBoundDirectMethod(prefix: prefix, handler: direct.method.bind(context, direct.admission),
                                             answeredCalls: directCalls, next: first)
        }
        return first
    }

    /// Calls answered from their bytes so far (tests check that the direct way is taken).
    package var directlyAnsweredCalls: Int { directCalls.pointee }
    /// Behind a pointer: a stored property counted on every direct call cost a run-time
    /// exclusivity check each time.
    private let directCalls: UnsafeMutablePointer<Int> = {
        let count = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        count.initialize(to: 0)
        return count
    }()

    deinit { directCalls.deallocate() }

    private var info: [String: JSONValue] {
        ["vendor": .string(vendor), "product": .string(product), "version": .string(version), "url": .string(url),
         "interfaces": .array(interfaceOrder.map { .string($0) })]
    }

    /// Checks the call and runs its handler, or answers it with the error the checks found.
    public func dispatch(_ call: VarlinkCall, context: Context, reply: VarlinkReplyHandle) {
        guard let entry = entries[call.method] else {
            if let name = call.interfaceName, interfaces[name] != nil {
                reply.fail(.methodNotFound(call.method))
            } else {
                reply.fail(.interfaceNotFound(call.interfaceName ?? call.method))
            }
            return
        }
        do {
            try entry.admission?(context)
        } catch {
            return reply.fail(error)
        }
        guard let implementation = entry.implementation else { return reply.fail(.methodNotImplemented(call.method)) }
        if let parameter = entry.interface.invalidParameter(in: call.parameters, of: entry.signature) {
            return reply.fail(.invalidParameter(parameter))
        }
        // No method here hands its connection over to another protocol.
        if call.upgrade { return reply.fail(.invalidParameter("upgrade")) }
        if implementation.requiresMore && !call.more { return reply.fail(.expectedMore) }
        do {
            try implementation.handler(call, context, reply)
        } catch {
            if !reply.isFinished { reply.fail(error) }
        }
    }
}
