import ProctorPolicy
import ProctorProtocol

/// Counters since start, for `Status` and `proctorctl metrics` (docs/fleet.md). Loop thread
/// only. Counting a decision is on the request path: one increment through a pointer the
/// daemon's `let` reaches, with no exclusivity check of a class's stored property and no
/// uniqueness check of an array.
final class DaemonCounters {
    /// Allowed and denied decisions per action, at `2 * actionIndex + (allowed ? 0 : 1)`:
    /// `decisionSlots` counts, allocated with the counters and freed with them.
    private let decisions: UnsafeMutablePointer<Int>
    private static let decisionSlots = 2 * Action.allCases.count
    private(set) var registrationsRefused: [RegistrationRefusal: Int] = [:]
    /// State storage operations that failed (each also logged, MESSAGE_ID `931641ee…`).
    var storageFailures = 0

    /// Why a registration was refused, as `Status` and the metrics name it.
    enum RegistrationRefusal: String, CaseIterable {
        case unknownApp = "unknown-app"
        case identityMismatch = "identity-mismatch"
        case sessionLimit = "session-limit"
    }

    init() {
        decisions = .allocate(capacity: Self.decisionSlots)
        decisions.initialize(repeating: 0, count: Self.decisionSlots)
    }

    deinit { decisions.deallocate() }

    /// `index(of:)` is below `Action.allCases.count`, so the slot is within the allocation.
    func countDecision(_ action: Action, allowed: Bool) {
        decisions[2 * Self.index(of: action) + (allowed ? 0 : 1)] += 1
    }

    func countRefusal(_ refusal: RegistrationRefusal) {
        registrationsRefused[refusal, default: 0] += 1
    }

    var decisionsAllowed: Int { stride(from: 0, to: Self.decisionSlots, by: 2).reduce(0) { $0 + decisions[$1] } }
    var decisionsDenied: Int { stride(from: 1, to: Self.decisionSlots, by: 2).reduce(0) { $0 + decisions[$1] } }

    /// `DecisionCount`s of the Admin interface, every action in `Action.allCases` order.
    var decisionCounts: [Admin.DecisionCount] {
        Action.allCases.map { action in
            let index = 2 * Self.index(of: action)
            return Admin.DecisionCount(action: action.rawValue, allowed: decisions[index], denied: decisions[index + 1])
        }
    }

    /// `RefusalCount`s of the Admin interface, every reason (zeros too: a counter should exist
    /// before its first increment, or a scraper's `rate()` misses it).
    var refusalCounts: [Admin.RefusalCount] {
        RegistrationRefusal.allCases.map { Admin.RefusalCount(reason: $0.rawValue, count: registrationsRefused[$0] ?? 0) }
    }

    /// A switch rather than `allCases.firstIndex(of:)`, which compares strings on every decision.
    /// Exhaustive, so a new action does not compile until it has its index here.
    private static func index(of action: Action) -> Int {
        switch action {
        case .launch: 0
        case .clipboardCopy: 1
        case .clipboardPaste: 2
        case .shareSend: 3
        case .shareReceive: 4
        case .print: 5
        case .screenCapture: 6
        case .fileExport: 7
        case .notification: 8
        }
    }
}
