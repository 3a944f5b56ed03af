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
    /// `Decide`'s reply written from the engine's decision straight to bytes, for the direct
    /// path (`VarlinkDirectMethod`; `DecideFastPath.swift` reads the request): the bytes of
    /// `Reply(Decision(decision, askingApp: app))` serialized, but neither its rule nor its
    /// reason is made a `String` or escaped for the call (`EngineDecision.writeAnswer`), and a
    /// reply sent before to the same app is copied from its session's `DecisionAnswers`.
    public struct DirectReply: VarlinkDirectReply {
        public let decision: EngineDecision
        /// The replies already sent to the app that asked (its session's), and its id.
        let answers: UnsafeMutablePointer<DecisionAnswers>

        /// The reply to the app whose replies `answers` keeps (`DirectReply.answers(to:)`), for
        /// which the engine made `decision`. `answers` must stay valid until the reply is written.
        public init(_ decision: EngineDecision, keptIn answers: UnsafeMutablePointer<DecisionAnswers>) {
            (self.decision, self.answers) = (decision, answers)
        }

        /// Where the replies to `app` are kept: whole messages, envelope included.
        public static func answers(to app: AppID) -> DecisionAnswers {
            DecisionAnswers(to: app, between: envelopeStart, and: envelopeEnd)
        }

        private static let envelopeStart: StaticString = #"{"parameters":"#
        private static let envelopeEnd: StaticString = "}\0"

        /// `{"allowed":…,"reason":…,"rule":…}`: `Reply.fields`, in their canonical order.
        public func writeParameters(to out: inout [UInt8]) { decision.writeAnswer(to: &out, askingApp: answers.pointee.app) }

        /// The reply message with its envelope in the answer's one copy.
        public func writeReply(to out: inout [UInt8]) { answers.pointee.write(decision, to: &out) }
    }
}
