public import ProctorPolicy
public import Varlink

extension Agent.Decide.Reply {
    /// The reply that tells an app `decision` (without its violation, which only a launch
    /// verdict carries).
    public init(_ decision: Decision) {
        self.init(allowed: decision.allowed, rule: decision.rule, reason: decision.reason)
    }
}

extension Agent.Decide {
    /// `Decide`'s reply written from the engine's `Decision` straight to bytes, for the direct
    /// path (`VarlinkDirectMethod`; `DecideFastPath.swift` reads the request): the bytes of
    /// `Reply(decision)` serialized, but neither its rule nor its reason is made a `String` or
    /// escaped for the call (`Decision.writeAnswer(to:)`).
    public struct DirectReply: VarlinkDirectReply {
        public let decision: Decision

        public init(_ decision: Decision) { self.decision = decision }

        /// `{"allowed":…,"reason":…,"rule":…}`: `Reply.fields`, in their canonical order.
        public func writeParameters(to out: inout [UInt8]) { decision.writeAnswer(to: &out) }

        /// The reply message with its envelope in the answer's one copy.
        public func writeReply(to out: inout [UInt8]) { decision.writeAnswer(to: &out, between: #"{"parameters":"#, and: "}\0") }
    }
}
