import JSONCore
import ProctorPolicy
import SystemdKit

/// A decision as the event loop records it, for its log line and its `decision` event: one
/// allocation, shared by the log queue (the writer thread makes the line, `logContent()`),
/// the history queue (written as JSON a moment later, `serialized()`) and `Events`
/// subscribers (`members`). A denied `Decide` makes one on the loop for every call, so the
/// loop keeps only the typed values, and whoever reads them makes the text; and it takes one
/// written to the history that nothing else holds any more (`Pool`) rather than a new one.
///
/// `@unchecked Sendable`: what it says is written on the loop's thread only while no other
/// thread can reach it (new, or known to be referenced by the pool alone), and then read by
/// any thread (the log writer's gets it through the logger's lock).
final class DecisionRecord: DeferredLogContent, @unchecked Sendable {
    /// A decision's target as the record keeps it: its bytes within the record's own allocation
    /// when they fit (an app id, most paths; a `String` of them was a second allocation per
    /// denial), else a `String`. `string` makes the `String` when the line or event is made.
    struct Target: Sendable {
        private let bytes: InlineArray<64, UInt8>
        /// The bytes of `bytes` in use; -1 when the target is `long`.
        private let count: Int
        private let long: String?

        /// `target`: valid UTF-8.
        init(_ target: UnsafeBufferPointer<UInt8>) {
            var bytes = InlineArray<64, UInt8>(repeating: 0)
            if target.count <= bytes.count {
                withUnsafeMutableBytes(of: &bytes) { $0.copyMemory(from: UnsafeRawBufferPointer(target)) }
                (count, long) = (target.count, nil)
            } else {
                (count, long) = (-1, String(decoding: target, as: UTF8.self))
            }
            self.bytes = bytes
        }

        init(_ target: String) {
            var target = target
            self = target.withUTF8(Target.init)
        }

        var string: String {
            guard count >= 0 else { return long! }
            return withUnsafeBytes(of: bytes) { String(decoding: $0.prefix(count), as: UTF8.self) }
        }
    }

    // What the record says: `var`s only so that a pooled record is filled again (`Pool`), with
    // no run-time exclusivity check (≈ 90 instructions an access): the class comment says who
    // writes them and when. Empty until `fill`.
    @exclusivity(unchecked) private(set) var app: AppID = ""
    @exclusivity(unchecked) private(set) var action = ""
    @exclusivity(unchecked) private var recordedTarget: Target?
    /// The decision as the engine made it, its rule rendered only when read (not on each
    /// denial). Its violation is dropped: neither the line nor the event carries it.
    @exclusivity(unchecked) private var decision = DecisionRecord.nothing
    /// The log line's `POLICY_VERSION`: the active policy's when the decision was made.
    @exclusivity(unchecked) private(set) var policyVersion = ""
    /// The fields that end the log line (`AgentSession.decisionLogFields`); empty when the
    /// decision is not logged.
    @exclusivity(unchecked) private(set) var closingFields: [(String, String)] = []
    /// Whether the decision's line is logged: a denial's is made from its record in the history
    /// queue (`Daemon.logQueuedDenial`), which holds those that are not too.
    @exclusivity(unchecked) private(set) var isLogged = false

    /// What an empty record holds for its decision: nothing allocated.
    private static let nothing = Decision(allowed: false, rule: "", reason: "")

    var target: String? { recordedTarget?.string }
    var allowed: Bool { decision.allowed }
    var rule: String { decision.rule }
    var reason: String { decision.reason }

    init(_ decision: Decision, app: AppID, action: String, target: Target?, policyVersion: String,
         closingFields: [(String, String)], logged: Bool = true) {
        fill(decision, app: app, action: action, target: target, policyVersion: policyVersion, closingFields: closingFields,
             logged: logged)
    }

    /// Says `decision` and the rest: when made, and again on a pooled record (emptied, so the
    /// values replaced free nothing).
    fileprivate func fill(_ decision: consuming Decision, app: consuming AppID, action: consuming String,
                          target: consuming Target?, policyVersion: consuming String,
                          closingFields: consuming [(String, String)], logged: Bool) {
        self.decision = decision
        self.decision.violation = nil
        self.app = app
        self.action = action
        self.recordedTarget = target
        self.policyVersion = policyVersion
        self.closingFields = closingFields
        self.isLogged = logged
    }

    /// Frees what the record holds, before it waits in the pool.
    fileprivate func empty() {
        fill(Self.nothing, app: "", action: "", target: nil, policyVersion: "", closingFields: [], logged: false)
    }

    convenience init(app: AppID, action: String, target: String?, allowed: Bool, rule: String, reason: String,
                     policyVersion: String = "", closingFields: [(String, String)] = []) {
        self.init(Decision(allowed: allowed, rule: rule, reason: reason), app: app, action: action, target: target.map(Target.init),
                  policyVersion: policyVersion, closingFields: closingFields)
    }

    // MARK: The log line

    /// The line's message and fields, made on the log writer's thread.
    func logContent() -> (message: String, fields: [(String, String)]) {
        // One allocation, element by element: appending array literals copied each twice.
        var fields: [(String, String)] = []
        let target = target
        fields.reserveCapacity(6 + closingFields.count)
        fields.append((DaemonEventField.appID, app))
        fields.append((DaemonEventField.action, action))
        fields.append((DaemonEventField.decision, allowed ? "allowed" : "denied"))
        fields.append((DaemonEventField.rule, rule))
        fields.append((DaemonEventField.policyVersion, policyVersion))
        if let target { fields.append((DaemonEventField.target, target)) }
        for field in closingFields { fields.append(field) }
        return (message, fields)
    }

    /// `Denied print for com.example.notes: <reason>`, made with one allocation: interpolated,
    /// the string grew piece by piece (≈ 3 500 instructions a denial, the line's largest part).
    private var message: String {
        let verdict: StaticString = allowed ? "Allowed " : "Denied "
        let forApp: StaticString = " for ", colon: StaticString = ": "
        let reason = reason
        let count = verdict.utf8CodeUnitCount + action.utf8.count + forApp.utf8CodeUnitCount + app.utf8.count
            + colon.utf8CodeUnitCount + reason.utf8.count
        return String(unsafeUninitializedCapacity: count) { buffer in
            var writer = ByteWriter(buffer: UnsafeMutableRawBufferPointer(buffer))
            writer.write(verdict)
            writer.write(action)
            writer.write(forApp)
            writer.write(app)
            writer.write(colon)
            writer.write(reason)
            return writer.count
        }
    }

    // MARK: The event's data

    /// The event's `data`, for the readers that want a dictionary (an `Events` stream,
    /// `EventHistory` of events still queued).
    var members: [String: JSONValue] {
        ["action": .string(action), "target": target.map(JSONValue.string) ?? .null, "allowed": .bool(allowed),
         "rule": .string(rule), "reason": .string(reason)]
    }

    /// The bytes `JSONValue.object(members).serialized()` gives: members sorted by their
    /// UTF-8 bytes (action, allowed, reason, rule, target), no white space. Building the
    /// dictionary (five keys hashed) and sorting it cost more than the decision.
    func serialized() -> [UInt8] {
        var out: [UInt8] = []
        let rule = rule, reason = reason, target = target
        out.reserveCapacity(64 + action.utf8.count + (target?.utf8.count ?? 0) + rule.utf8.count + reason.utf8.count)
        out.append(contentsOf: #"{"action":"#.utf8)
        JSONValue.writeString(action, to: &out)
        out.append(contentsOf: (allowed ? #","allowed":true,"reason":"# : #","allowed":false,"reason":"#).utf8)
        JSONValue.writeString(reason, to: &out)
        out.append(contentsOf: #","rule":"#.utf8)
        JSONValue.writeString(rule, to: &out)
        out.append(contentsOf: #","target":"#.utf8)
        if let target { JSONValue.writeString(target, to: &out) } else { out.append(contentsOf: "null".utf8) }
        out.append(UInt8(ascii: "}"))
        return out
    }
}

extension DecisionRecord {
    /// The records the loop fills again instead of allocating new ones: a denial's record lives
    /// until the history write (`Daemon.flushEventHistory`), which freed thousands at once, so
    /// that each new one came from malloc's slow path. The write hands its batch back
    /// (`recycle`), and the records that nothing else holds any more (the log writer may still)
    /// wait here for the next decisions. Bounded by `capacity`, and holding at most one write's
    /// worth: a write frees what the previous one kept and no decision took since, so a
    /// `recycle` with no events (a write that found the queue empty) empties the pool. For the
    /// loop's thread only.
    final class Pool {
        /// The most records kept (≈ 240 bytes each): a history write's worth of denials at
        /// ≈ 40 000 a second.
        let capacity: Int
        /// Behind a pointer: a change to a variable stored in a class is a run-time exclusivity check.
        private let free = UnsafeMutablePointer<[DecisionRecord]>.allocate(capacity: 1)

        init(capacity: Int = 4096) {
            self.capacity = capacity
            free.initialize(to: [])
        }

        deinit { free.deinitialize(count: 1).deallocate() }

        /// Records waiting to be filled again.
        var count: Int { free.pointee.count }

        /// A record of `decision`: a pooled one filled again, or a new one.
        func make(_ decision: consuming Decision, app: consuming AppID, action: consuming String, target: consuming Target?,
                  policyVersion: consuming String, closingFields: consuming [(String, String)],
                  logged: Bool) -> DecisionRecord {
            guard let record = free.pointee.popLast() else {
                return DecisionRecord(decision, app: app, action: action, target: target, policyVersion: policyVersion,
                                      closingFields: closingFields, logged: logged)
            }
            record.fill(decision, app: app, action: action, target: target, policyVersion: policyVersion,
                        closingFields: closingFields, logged: logged)
            return record
        }

        /// Frees the records kept at the last call that no decision took since, then keeps the
        /// decision records of `events` (just written to the history) that nothing else holds,
        /// emptied (their strings freed now, not when they are filled again), up to `capacity`.
        func recycle(_ events: consuming [EventFeed.Pending]) {
            free.pointee.removeAll(keepingCapacity: !events.isEmpty)
            while let event = events.popLast() {
                guard free.pointee.count < capacity, case .decision(var record) = event.payload else { continue }
                _ = consume event
                // Unique once the event is gone: neither the log queue nor anything else holds it.
                guard isKnownUniquelyReferenced(&record) else { continue }
                record.empty()
                free.pointee.append(record)
            }
        }
    }
}
