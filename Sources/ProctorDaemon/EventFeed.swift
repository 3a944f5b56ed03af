import JSONCore
import ProctorPolicy
import ProctorProtocol
import ProctorStore
import Varlink

/// proctord's events: each gets an id, goes at once to the `Admin.Events` streams whose
/// filter matches, and waits in a bounded queue until the daemon writes the queue to the
/// state store's history in one transaction (`Daemon.flushEventHistory`). The queue is
/// part of the history: `EventHistory` and a stream's replay read the store and the queue.
final class EventFeed {
    /// An event not yet written to the store.
    struct Pending {
        let id: Int64
        let occurredAt: UnixMilliseconds
        let receivedAt: UnixMilliseconds
        let kind: String
        let payload: Payload

        /// An event's app and `data`: a decision's as its record (`DecisionRecord`, from which
        /// its log line is made too), any other's as its members.
        enum Payload {
            case members([String: JSONValue], appID: AppID?)
            case decision(DecisionRecord)
        }

        var appID: AppID? {
            switch payload {
            case .members(_, let appID): appID
            case .decision(let decision): decision.app
            }
        }

        var data: [String: JSONValue] {
            switch payload {
            case .members(let members, _): members
            case .decision(let decision): decision.members
            }
        }

        var record: EventRecord {
            let data = switch payload {
            case .members(let members, _): JSONValue.object(members).serializedString()
            case .decision(let decision): String(decoding: decision.serialized(), as: UTF8.self)
            }
            return EventRecord(id: id, occurredAt: occurredAt, receivedAt: receivedAt, kind: kind, appID: appID, data: data)
        }

        var message: Admin.Event {
            Admin.Event(kind: kind, appId: appID, data: data, id: Int(id), occurredAt: Clock.rfc3339(occurredAt),
                        receivedAt: Clock.rfc3339(receivedAt))
        }
    }

    private struct Subscriber {
        let appID: String?
        let kinds: Set<String>?
        let handle: VarlinkReplyHandle
    }

    /// Most concurrent `Events` streams (each holds a connection's output buffer).
    let maxSubscribers = 64
    /// Most events waiting to be written; past it the oldest is dropped and counted.
    let maxPending: Int
    /// The id of the newest event (0 before the first ever).
    var lastID: Int64 { state.pointee.lastID }
    /// The events not yet written, oldest first.
    var pending: [Pending] { Array(state.pointee.waiting) }
    /// Events held in memory, the dropped ones not yet let go of included: at most
    /// `maxPending` and half as many again.
    var heldCount: Int { state.pointee.queue.count }
    /// Events dropped from a full queue since start (the store failed: a working one is
    /// written to at half the bound, `onHalfFull`).
    var droppedCount: Int { state.pointee.droppedCount }
    /// Told when an event enters an empty queue: time to schedule a write.
    var onFirstPending: (() -> Void)?
    /// Told when the waiting events reach half the bound: time to write them without waiting
    /// for the timer (a flood of denials would fill the queue first). It may take the queue
    /// (`takePending`) from inside the `emit` that filled it.
    var onHalfFull: (() -> Void)?

    /// What recording an event reads and changes, behind a pointer: each access to a stored
    /// property of a class is a run-time exclusivity check (≈ 90 instructions), and a denial
    /// made four; every allowed `Decide` asks whether anyone subscribes.
    private struct State {
        var lastID: Int64
        /// The waiting events are `queue[head...]`; those before `head` were dropped. They
        /// leave the array together, once they are as many as half the bound: dropping one at
        /// a time from the front moved every waiting event (10 000, ≈ 3 MB) for each new one
        /// while the queue was full, and a flood of denials then held the loop in `memmove`.
        var queue: [Pending] = []
        var head = 0
        var droppedCount = 0
        var subscribers: [ObjectIdentifier: Subscriber] = [:]

        var waiting: ArraySlice<Pending> { queue[head...] }
        var waitingCount: Int { queue.count - head }
        var isEmpty: Bool { waitingCount == 0 }
    }
    private let state = UnsafeMutablePointer<State>.allocate(capacity: 1)

    init(lastID: Int64, maxPending: Int = 10_000) {
        state.initialize(to: State(lastID: lastID))
        self.maxPending = maxPending
    }

    deinit { state.deinitialize(count: 1).deallocate() }

    /// Adds a stream; false when `maxSubscribers` are already open. `replay` (recorded
    /// events the client asked for) is sent first, in the same loop turn, so nothing
    /// emitted in between is missed or sent twice.
    func add(appID: String?, kinds: Set<String>?, handle: VarlinkReplyHandle, replay: [Admin.Event] = []) -> Bool {
        guard state.pointee.subscribers.count < maxSubscribers else { return false }
        for event in replay { handle.send(Admin.Events.Reply(event: event).fields) }
        let key = ObjectIdentifier(handle)
        state.pointee.subscribers[key] = Subscriber(appID: appID, kinds: kinds, handle: handle)
        handle.onCancel = { [weak self] in self?.state.pointee.subscribers[key] = nil }
        return true
    }

    /// Whether any `Events` stream is open.
    var hasSubscribers: Bool { !state.pointee.subscribers.isEmpty }

    /// Records an event that happened at `occurredAt` (now when nil) and sends it to every
    /// subscriber whose filter matches. With `recorded: false` it is only streamed: it keeps
    /// no place in the history and carries the id of the last recorded event.
    func emit(kind: String, appID: String?, occurredAt: UnixMilliseconds? = nil, recorded: Bool = true,
              data: [String: JSONValue]) {
        emit(kind: kind, occurredAt: occurredAt, recorded: recorded, payload: .members(data, appID: appID))
    }

    /// `emit` of a `decision` event, its data kept typed.
    func emitDecision(_ decision: consuming DecisionRecord, recorded: Bool) {
        emit(kind: EventKind.decision, recorded: recorded, payload: .decision(consume decision))
    }

    private func emit(kind: String, occurredAt: UnixMilliseconds? = nil, recorded: Bool, payload: consuming Pending.Payload) {
        let now = Clock.now()
        if recorded { state.pointee.lastID += 1 }
        let event = Pending(id: state.pointee.lastID, occurredAt: occurredAt ?? now, receivedAt: now, kind: kind,
                            payload: consume payload)
        if !state.pointee.subscribers.isEmpty { send(event) }
        // Last, and consumed: the event moves into the queue rather than being copied (a
        // denial's record, ≈ 300 instructions); the loop's thread sees no difference in the order.
        if recorded { enqueue(consume event) }
    }

    /// Sends `event` to every subscriber whose filter matches.
    private func send(_ event: Pending) {
        var reply: [String: JSONValue]?
        for (key, subscriber) in state.pointee.subscribers {
            if let wanted = subscriber.appID, event.appID?.hasSameBytes(as: wanted) != true { continue }  // bytes, as the history
            if let kinds = subscriber.kinds, !kinds.contains(event.kind) { continue }
            guard subscriber.handle.isConnected else {
                state.pointee.subscribers[key] = nil
                continue
            }
            if reply == nil { reply = Admin.Events.Reply(event: event.message).fields }
            subscriber.handle.send(reply!)
        }
    }

    /// Takes every waiting event, oldest first, for one write.
    func takePending() -> [Pending] {
        defer {
            state.pointee.queue.removeAll(keepingCapacity: true)
            state.pointee.head = 0
        }
        return state.pointee.head == 0 ? state.pointee.queue : Array(state.pointee.waiting)
    }

    /// Puts back a batch whose write failed, ahead of what came since. The caller schedules
    /// the next attempt (`onFirstPending` is not told).
    func restore(_ batch: [Pending]) {
        state.pointee.queue = batch + state.pointee.waiting
        state.pointee.head = 0
        dropExcess()
    }

    /// The records of the waiting `decision` events newer than event `id` that are logged
    /// (`DecisionRecord.isLogged`), oldest first.
    func loggedDecisions(after id: Int64) -> [DecisionRecord] {
        let pending = state.pointee.waiting
        var first = pending.endIndex
        while first > pending.startIndex, pending[first - 1].id > id { first -= 1 }
        return pending[first...].compactMap { event in
            guard case .decision(let record) = event.payload, record.isLogged else { return nil }
            return record
        }
    }

    /// Waiting events that `query` matches, oldest first.
    func pending(matching query: EventQuery) -> [Pending] {
        state.pointee.waiting.filter { query.matches(id: $0.id, occurredAt: $0.occurredAt, kind: $0.kind, appID: $0.appID) }
    }

    /// One event, appended as itself: appending a collection of one (the generic
    /// `append(contentsOf:)`) cost a denial ≈ 700 instructions. Inlined, so that a denial's
    /// event (≈ 300 bytes) is not copied once more on its way into the queue.
    @inline(__always)
    private func enqueue(_ event: consuming Pending) {
        let wasEmpty = state.pointee.isEmpty
        state.pointee.queue.append(consume event)
        dropExcess()
        if wasEmpty, !state.pointee.isEmpty { onFirstPending?() }
        if state.pointee.waitingCount == maxPending / 2 { onHalfFull?() }
    }

    /// Keeps the newest `maxPending` events. The dropped ones are let go of in one move once
    /// they are half as many as the bound: each event is moved at most twice, however long
    /// the queue stays full.
    private func dropExcess() {
        let excess = state.pointee.waitingCount - maxPending
        guard excess > 0 else { return }
        state.pointee.head += excess
        state.pointee.droppedCount += excess
        if state.pointee.head >= max(maxPending / 2, 1) {
            state.pointee.queue.removeFirst(state.pointee.head)
            state.pointee.head = 0
        }
    }
}
