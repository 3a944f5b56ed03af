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
        /// The replies already sent to the app that asked (its session's), if kept.
        let answers: UnsafeMutablePointer<DecisionAnswers>?

        public init(_ decision: Decision) { (self.decision, answers) = (decision, nil) }

        /// The reply to the app whose replies `answers` keeps (`DirectReply.answers()`): a
        /// reply sent before is copied from there. `answers` must stay valid until the reply is
        /// written, and hold only this app's replies.
        public init(_ decision: Decision, keptIn answers: UnsafeMutablePointer<DecisionAnswers>) {
            (self.decision, self.answers) = (decision, answers)
        }

        /// Where one app's replies are kept: whole messages, envelope included.
        public static func answers() -> DecisionAnswers { DecisionAnswers(between: envelopeStart, and: envelopeEnd) }

        private static let envelopeStart: StaticString = #"{"parameters":"#
        private static let envelopeEnd: StaticString = "}\0"

        /// `{"allowed":…,"reason":…,"rule":…}`: `Reply.fields`, in their canonical order.
        public func writeParameters(to out: inout [UInt8]) { decision.writeAnswer(to: &out) }

        /// The reply message with its envelope in the answer's one copy.
        public func writeReply(to out: inout [UInt8]) {
            guard let answers else { return decision.writeAnswer(to: &out, between: Self.envelopeStart, and: Self.envelopeEnd) }
            answers.pointee.write(decision, to: &out)
        }
    }
}
