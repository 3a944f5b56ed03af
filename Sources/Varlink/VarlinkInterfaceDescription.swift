public import JSONCore

/// A method of an interface: its input and output parameters.
public struct VarlinkMethodSignature: Sendable {
    public let name: String
    public let input: [VarlinkField]
    public let output: [VarlinkField]
    let inputShape: VarlinkStructShape

    init(name: String, input: [VarlinkField], output: [VarlinkField]) {
        self.name = name
        self.input = input
        self.output = output
        self.inputShape = VarlinkStructShape(input)
    }
}

/// A parsed and checked Varlink interface definition (the IDL text of varlink.org):
/// `interface a.b.c`, then `type`, `method` and `error` members, with `#` comments.
/// Every type a member mentions is defined, and no name is defined twice.
public struct VarlinkInterfaceDescription: Sendable {
    /// The interface name, for example `org.varlink.service`.
    public let name: String
    /// The definition exactly as given (what `GetInterfaceDescription` returns).
    public let text: String
    public let types: [String: VarlinkType]
    public let methods: [String: VarlinkMethodSignature]
    /// Error names (without the interface prefix) and their parameters.
    public let errors: [String: [VarlinkField]]

    public init(parsing text: String) throws(VarlinkInterfaceParseError) {
        var parser = VarlinkInterfaceParser(text: text)
        let parsed = try parser.parseInterface()
        self.name = parsed.name
        self.text = text
        self.types = parsed.types
        self.methods = parsed.methods
        self.errors = parsed.errors
    }

    /// Checks a call's parameters against the method's input: the name of the first parameter
    /// that is unknown, missing (and not optional) or of the wrong type, else `nil`.
    public func invalidParameter(in parameters: [String: JSONValue], of method: VarlinkMethodSignature) -> String? {
        method.inputShape.firstInvalidMember(of: parameters, types: types)
    }

    /// Checks an object against a list of fields of this interface (a method's output, an
    /// error's parameters), as `invalidParameter` checks a call: the name of the first member
    /// that is unknown, missing (and not optional) or of the wrong type, else `nil`.
    public func invalidMember(in members: [String: JSONValue], of fields: [VarlinkField]) -> String? {
        VarlinkStructShape(fields).firstInvalidMember(of: members, types: types)
    }
}

/// The `org.varlink.service` interface every Varlink service provides.
public enum VarlinkServiceInterface {
    public static let text = """
        # The Varlink Service Interface is provided by every varlink service. It
        # describes the service and the interfaces it implements.
        interface org.varlink.service

        # Get a list of all the interfaces a service provides and information
        # about the implementation.
        method GetInfo() -> (
          vendor: string,
          product: string,
          version: string,
          url: string,
          interfaces: []string
        )

        # Get the description of an interface that is implemented by this service.
        method GetInterfaceDescription(interface: string) -> (description: string)

        # The requested interface was not found.
        error InterfaceNotFound (interface: string)

        # The requested method was not found
        error MethodNotFound (method: string)

        # The interface defines the requested method, but the service does not
        # implement it.
        error MethodNotImplemented (method: string)

        # One of the passed parameters is invalid.
        error InvalidParameter (parameter: string)

        # Client is denied access
        error PermissionDenied ()

        # Method is expected to be called with 'more' set to true, but wasn't
        error ExpectedMore ()

        """
}
