import JSONCore
import Varlink

/// The readable form of an error reply from proctord: the Varlink error name, then what it
/// means with its parameters, then (for an invalid policy) one line per problem.
enum DaemonRefusal {
    static func lines(for error: VarlinkError) -> [String] {
        let parameters = error.parameters
        func text(_ key: String) -> String { parameters[key].map(display) ?? "(not given)" }
        let explanation: String
        var details: [String] = []
        switch error.name {
        case VarlinkError.permissionDenied.name:
            explanation = "permission denied: Admin calls need root or membership of the proctor-admin group"
        case "io.proctor.Admin.VersionConflict":
            explanation = "the policy in force is version \(text("current")), not the expected \(text("expected")); nothing changed"
        case "io.proctor.Admin.VersionReused":
            explanation = "version \(text("version")) was applied before with other content (sha256 \(text("earlierSha256"))); "
                + "nothing changed. Give the policy a new version, or apply it with --force"
        case "io.proctor.Admin.InvalidPolicy":
            let problems = parameters["problems"]?.arrayValue ?? []
            explanation = "the policy is invalid (\(problems.count) problem\(problems.count == 1 ? "" : "s")); nothing changed"
            details = problems.map { problem in
                "  \(problem["path"].map(display) ?? "(document)"): \(problem["message"].map(display) ?? "")"
            }
        case "io.proctor.Admin.InvalidParameter":
            explanation = "proctord cannot accept \(text("parameter")): \(text("reason"))"
        case "io.proctor.Admin.UnknownApp":
            explanation = "no app \(text("appId")) in policy or inventory"
        case "io.proctor.Admin.UnknownVersion":
            explanation = "no applied policy with version \(text("version")) in history (see 'proctorctl policy history')"
        case "io.proctor.Admin.BundleRefused":
            explanation = "the bundle was refused (\(text("reason"))): \(text("message")); nothing changed"
        case "io.proctor.Admin.StorageFailure":
            explanation = "the state directory could not be written, nothing changed: \(text("message"))"
        default:
            explanation = parameters.isEmpty ? "" : parameters.keys.sorted()
                .map { "\($0): \(parameters[$0].map(display) ?? "")" }.joined(separator: ", ")
        }
        let first = "proctord refused: \(error.name)" + (explanation.isEmpty ? "" : ": " + explanation)
        return [first] + details
    }

    /// A string as it is; any other value as JSON.
    static func display(_ value: JSONValue) -> String { value.stringValue ?? value.serializedString() }
}
