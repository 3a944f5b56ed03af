public import ProctorPolicy

// `io.proctor.Admin`: the methods administrators and MDM connectors call (proctorctl), their
// parameters and replies. The message types are generated from
// `Interfaces/io.proctor.Admin.varlink` (with `Interfaces/SwiftMapping.txt`) at build time;
// to add a field, add it there. What is logic stays here: limits, the rules a message is
// checked against, conversions. Times are RFC 3339 strings in UTC, as on the wire.

extension Admin.Problem {
    /// The path plus a message that carries the file, line and column when there are any.
    public init(_ problem: PolicyProblem) {
        self.init(path: problem.path.description, message: problem.description,
                  line: problem.location?.line, column: problem.location?.column)
    }
}

extension Admin.Notify {
    /// The longest a notification may wait for its app (30 days).
    public static let maxTTLSeconds = 30 * 86_400
    /// How long it waits when the request does not say (24 hours).
    public static let defaultTTLSeconds = 86_400
}

extension Admin.Events.Request {
    /// `after` is an event id: 0 or more.
    public func check() throws(MalformedMessage) {
        if let after, after < 0 { throw MalformedMessage(field: "after", reason: "must be 0 or more") }
    }
}

extension Admin.EventHistory {
    /// The most events one reply carries, and the default `limit`.
    public static let maxLimit = 10_000
}

extension Admin.EventHistory.Request {
    /// `since` and `until` are RFC 3339 times; `limit` is 1…`maxLimit`.
    public func check() throws(MalformedMessage) {
        try RFC3339.check(since, field: "since")
        try RFC3339.check(until, field: "until")
        if let limit, !(1...Admin.EventHistory.maxLimit).contains(limit) {
            throw MalformedMessage(field: "limit", reason: "must be 1 to \(Admin.EventHistory.maxLimit)")
        }
    }
}
