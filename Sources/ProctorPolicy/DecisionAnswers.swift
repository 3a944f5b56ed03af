/// The answers one app has been given, kept as their bytes, so that answering the same again is
/// a look-up and one copy rather than a rendering (≈ 700 instructions, and the code and tables
/// of the rule's and the reason's writers, cold after each context switch).
///
/// An engine decision's answer is fixed by its outcome, its sentence and its rule's parts
/// (`EngineDecision.answerKey`) once the asking app is: one `DecisionAnswers` answers one app
/// (`app`, a session's, whose id never changes), so the bytes never go stale, a policy reload
/// included. Bounded: at most `maxAnswers` answers in `maxBytes` bytes, allocated on first use;
/// past that an answer is written as it would be without this.
public struct DecisionAnswers {
    /// Open addressing, a power of two; kept at most three quarters full, so a look-up ends.
    static let slotCount = 64
    static let maxAnswers = 48
    static let maxBytes = 4096

    private struct Slot {
        /// `EngineDecision.answerKey`, 0 when free.
        var key: UInt64 = 0
        var start: UInt32 = 0
        var count: UInt32 = 0
    }

    private var slots: [Slot] = []
    /// The kept answers, one after the other.
    private var bytes: [UInt8] = []
    private var answers = 0
    private let before: StaticString, after: StaticString
    /// The app that asks, for which every decision written here was made.
    public let app: AppID

    /// The answers to `app`, written with `before` and `after` around them
    /// (`EngineDecision.writeAnswer(to:askingApp:between:and:)`).
    public init(to app: AppID, between before: StaticString, and after: StaticString) {
        self.app = app
        self.before = before
        self.after = after
    }

    /// Appends the answer to `decision`, made for `app`, to `out`, byte for byte as
    /// `decision.writeAnswer(to: &out, askingApp: app, between: before, and: after)` does.
    public mutating func write(_ decision: EngineDecision, to out: inout [UInt8]) {
        let key = decision.answerKey
        if slots.isEmpty { slots = Array(repeating: Slot(), count: Self.slotCount) }
        // The key's high bits after a multiplication by 2^64 / φ (Fibonacci hashing).
        var index = Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 58)
        while true {
            let slot = slots[index]
            if slot.key == key {
                // Within `bytes` by construction: a slot is filled only with the span just appended.
                return bytes.withUnsafeBytes { kept in
                    out.append(contentsOf: UnsafeRawBufferPointer(rebasing: kept[Int(slot.start)..<Int(slot.start + slot.count)]))
                }
            }
            if slot.key == 0 { break }
            index = (index + 1) & (Self.slotCount - 1)
        }
        let start = out.count
        decision.writeAnswer(to: &out, askingApp: app, between: before, and: after)
        let count = out.count - start
        guard answers < Self.maxAnswers, bytes.count + count <= Self.maxBytes else { return }
        slots[index] = Slot(key: key, start: UInt32(bytes.count), count: UInt32(count))
        bytes.append(contentsOf: out[start...])
        answers += 1
    }
}

extension EngineDecision {
    /// What fixes an engine decision's answer for the app that asks: its outcome, its
    /// sentence, and its rule's kind, setting (or fixed rule) and entry (never 0).
    var answerKey: UInt64 {
        let kind: UInt64, setting: UInt8, entry: Int32
        switch rule {
        case .defaults(let theSetting, let theEntry): (kind, setting, entry) = (1, theSetting.rawValue, theEntry)
        case .app(let theSetting, let theEntry, _): (kind, setting, entry) = (2, theSetting.rawValue, theEntry)
        case .builtin(let theSetting): (kind, setting, entry) = (3, theSetting.rawValue, -1)
        case .fixed(let fixed): (kind, setting, entry) = (4, fixed.rawValue, -1)
        }
        return (allowed ? 1 : 0) | kind << 1 | UInt64(reason.rawValue) << 8 | UInt64(setting) << 16
            | UInt64(UInt32(bitPattern: entry)) << 32
    }
}
