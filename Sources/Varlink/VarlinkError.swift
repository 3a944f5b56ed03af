public import JSONCore

/// A Varlink error: a fully qualified name (`interface.ErrorName`) and its parameters.
/// Handlers throw it; the client throws it when a call's reply carries `error`.
public struct VarlinkError: Error, Sendable, Hashable, CustomStringConvertible {
    public var name: String
    public var parameters: [String: JSONValue]

    public init(name: String, parameters: [String: JSONValue] = [:]) {
        self.name = name
        self.parameters = parameters
    }

    /// The interface that defines the error (everything before the last dot).
    public var interfaceName: String {
        guard let dot = name.utf8.lastIndex(of: UInt8(ascii: ".")) else { return "" }
        return String(name[..<dot])
    }

    public var description: String {
        parameters.isEmpty ? name : "\(name) \(JSONValue.object(parameters).serializedString())"
    }

    static let service = "org.varlink.service"

    /// `org.varlink.service.MethodNotFound`: the interface exists but has no such method.
    public static func methodNotFound(_ method: String) -> VarlinkError {
        VarlinkError(name: "\(service).MethodNotFound", parameters: ["method": .string(method)])
    }

    /// `org.varlink.service.InterfaceNotFound`: the service does not provide the interface.
    public static func interfaceNotFound(_ interface: String) -> VarlinkError {
        VarlinkError(name: "\(service).InterfaceNotFound", parameters: ["interface": .string(interface)])
    }

    /// `org.varlink.service.InvalidParameter`: the named parameter is unknown, missing or of the wrong type.
    public static func invalidParameter(_ parameter: String) -> VarlinkError {
        VarlinkError(name: "\(service).InvalidParameter", parameters: ["parameter": .string(parameter)])
    }

    /// `org.varlink.service.PermissionDenied`: the caller may not call this method.
    public static let permissionDenied = VarlinkError(name: "\(service).PermissionDenied")

    /// `org.varlink.service.ExpectedMore`: the method streams replies and must be called with `more`.
    public static let expectedMore = VarlinkError(name: "\(service).ExpectedMore")

    /// `org.varlink.service.MethodNotImplemented`: the interface defines the method but the service lacks it.
    public static func methodNotImplemented(_ method: String) -> VarlinkError {
        VarlinkError(name: "\(service).MethodNotImplemented", parameters: ["method": .string(method)])
    }
}
