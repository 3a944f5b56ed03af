public import JSONCore
public import ProctorPolicy
public import Varlink

/// The errors of `io.proctor.Agent`, as the interface file declares them.
public enum AgentError {
    public static func unknownApp(_ appID: String) -> VarlinkError {
        VarlinkError(name: "\(Agent.interface).UnknownApp", parameters: ["appId": .string(appID)])
    }
    public static func identityMismatch(_ appID: String, _ reason: String) -> VarlinkError {
        VarlinkError(name: "\(Agent.interface).IdentityMismatch", parameters: ["appId": .string(appID), "reason": .string(reason)])
    }
    /// The session id is echoed cut to 64 characters: it came from the client.
    public static func invalidSession(_ session: String) -> VarlinkError {
        VarlinkError(name: "\(Agent.interface).InvalidSession", parameters: ["session": .string(String(session.prefix(64)))])
    }
    public static func invalidParameter(_ parameter: String, _ reason: String) -> VarlinkError {
        VarlinkError(name: "\(Agent.interface).InvalidParameter",
                     parameters: ["parameter": .string(parameter), "reason": .string(reason)])
    }
    public static func storageFailure(_ message: String) -> VarlinkError {
        VarlinkError(name: "\(Agent.interface).StorageFailure", parameters: ["message": .string(message)])
    }
    public static func appBlocked(_ appID: String, state: AppState, reason: String) -> VarlinkError {
        VarlinkError(name: "\(Agent.interface).AppBlocked",
                     parameters: ["appId": .string(appID), "state": .string(state.rawValue), "reason": .string(reason)])
    }
    public static func dataKeyUnavailable(_ appID: String, reason: String) -> VarlinkError {
        VarlinkError(name: "\(Agent.interface).DataKeyUnavailable", parameters: ["appId": .string(appID), "reason": .string(reason)])
    }
}

/// The errors of `io.proctor.Admin`, as the interface file declares them.
public enum AdminError {
    public static func versionConflict(expected: String, current: String) -> VarlinkError {
        VarlinkError(name: "\(Admin.interface).VersionConflict", parameters: ["expected": .string(expected), "current": .string(current)])
    }
    public static func versionReused(_ version: String, sha256: String, earlierSha256: String) -> VarlinkError {
        VarlinkError(name: "\(Admin.interface).VersionReused",
                     parameters: ["version": .string(version), "sha256": .string(sha256), "earlierSha256": .string(earlierSha256)])
    }
    public static func invalidPolicy(_ problems: [PolicyProblem]) -> VarlinkError {
        VarlinkError(name: "\(Admin.interface).InvalidPolicy", parameters: ["problems": .array(problems.map { Admin.Problem($0).json })])
    }
    public static func unknownApp(_ appID: String) -> VarlinkError {
        VarlinkError(name: "\(Admin.interface).UnknownApp", parameters: ["appId": .string(appID)])
    }
    /// `reason` is the refusal's stable name (`rollback`, `unsigned`, …).
    public static func bundleRefused(reason: String, message: String) -> VarlinkError {
        VarlinkError(name: "\(Admin.interface).BundleRefused", parameters: ["reason": .string(reason), "message": .string(message)])
    }
    public static func unknownVersion(_ version: String) -> VarlinkError {
        VarlinkError(name: "\(Admin.interface).UnknownVersion", parameters: ["version": .string(version)])
    }
    public static func invalidParameter(_ parameter: String, _ reason: String) -> VarlinkError {
        VarlinkError(name: "\(Admin.interface).InvalidParameter",
                     parameters: ["parameter": .string(parameter), "reason": .string(reason)])
    }
    public static func storageFailure(_ message: String) -> VarlinkError {
        VarlinkError(name: "\(Admin.interface).StorageFailure", parameters: ["message": .string(message)])
    }
}

extension ProtocolMethod {
    /// A call's parameters read as the method's request, the one place a server reads them.
    /// `VarlinkService` has already checked them against the interface; what is left to
    /// refuse (an unknown action, an event name the interface does not list) is the
    /// interface's `InvalidParameter`, naming the parameter and why.
    public static func request(_ parameters: [String: JSONValue]) throws(VarlinkError) -> Request {
        do throws(MalformedMessage) {
            return try Request(parameters)
        } catch {
            throw VarlinkError(name: "\(interface).InvalidParameter",
                               parameters: ["parameter": .string(error.field), "reason": .string(error.reason)])
        }
    }
}
