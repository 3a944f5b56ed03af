import JSONCore
import ProctorProtocol
import ProctorStore
import Varlink

/// The event history: events wait in `EventFeed`'s bounded queue and are written to the
/// state store every `historyFlushInterval`, or as soon as half the bound waits, all of them
/// in one transaction without an fsync (`StateStore.appendEvents`), which also prunes past the
/// retention limits. So no client can make the loop wait on a disk flush by sending events: a
/// report costs a queue append, and a batch is written per 100 ms or per 5 000 events.
/// What a crash can lose is in docs/state.md ("Event history").
extension Daemon {
    static let historyFlushInterval: Duration = .milliseconds(100)
    /// After a failed write (full disk), the queue is kept and written again this much later.
    static let historyRetryInterval: Duration = .seconds(1)

    func scheduleHistoryFlush(after delay: Duration) {
        guard !historyFlushScheduled else { return }
        historyFlushScheduled = true
        _ = loop.schedule(after: delay) { [unowned self] in
            historyFlushScheduled = false
            flushEventHistory()
        }
    }

    /// Writes the waiting events (and the apps' latest lifecycle events among them) in one
    /// transaction. A failed write keeps them queued, bounded, for a later attempt.
    func flushEventHistory() {
        reportDroppedEvents()
        moveQueuedDenialsToLogBatch()  // their lines are made from the records about to be written
        let batch = events.takePending()
        guard !batch.isEmpty else { return }
        let lifecycle = batch.compactMap { event -> LifecycleUpdate? in
            guard event.kind == EventKind.lifecycle, let appID = event.appID, let name = event.data["event"]?.stringValue else {
                return nil
            }
            return LifecycleUpdate(appID: appID, event: name, at: event.occurredAt)
        }
        do {
            try store.appendEvents(batch.map(\.record), lifecycle: lifecycle, retention: configuration.eventRetention,
                                   now: Clock.now())
            historyWriteFailing = false
        } catch {
            events.restore(batch)
            if !historyWriteFailing {
                historyWriteFailing = true
                logStorageFailure("recording \(batch.count) event(s) in the event history (kept in memory, up to "
                                  + "\(events.maxPending), and written again when it works)", error)
            }
            scheduleHistoryFlush(after: Self.historyRetryInterval)
        }
    }

    /// Says once per episode how many events the full queue had to drop.
    private func reportDroppedEvents() {
        let dropped = events.droppedCount
        guard dropped > reportedDroppedEvents else { return }
        reportedDroppedEvents = dropped
        // Only a failing store lets the queue fill: half of it waiting is written at once.
        log(.eventsDropped, "\(dropped) events dropped from the event history in total: the state database could not "
            + "take them", [("DROPPED", String(dropped))])
    }

    /// `Admin.EventHistory`: the store's matching events and the queue's, the newest `limit`.
    func eventHistory(_ request: Admin.EventHistory.Request) throws(VarlinkError) -> Admin.EventHistory.Reply {
        let query = EventQuery(appID: request.filter?.appId, kinds: request.filter?.kinds,
                               since: request.since.flatMap(RFC3339.milliseconds),
                               until: request.until.flatMap(RFC3339.milliseconds))
        let limit = request.limit ?? Admin.EventHistory.maxLimit
        let matching = try recordedEvents(matching: query, limit: limit + 1)
        return Admin.EventHistory.Reply(events: Array(matching.suffix(limit)), lastId: Int(events.lastID),
                                        truncated: matching.count > limit)
    }

    /// The newest `limit` recorded events matching `query`, oldest first, from the store and
    /// the queue (whose events are all newer than the store's).
    func recordedEvents(matching query: EventQuery, limit: Int) throws(VarlinkError) -> [Admin.Event] {
        let stored: [EventRecord]
        do { stored = try store.events(matching: query, limit: limit) } catch {
            throw adminError(for: error, while: "reading the event history")
        }
        let queued = events.pending(matching: query).map(\.message)
        let fromStore = stored.suffix(max(0, limit - queued.count)).map { record in
            Admin.Event(kind: record.kind, appId: record.appID, data: (try? JSONParser.parse(record.data))?.objectValue ?? [:],
                        id: Int(record.id), occurredAt: Clock.rfc3339(record.occurredAt), receivedAt: Clock.rfc3339(record.receivedAt))
        }
        return fromStore + queued.suffix(limit)
    }
}

/// The `kind` of each event (io.proctor.Admin.EventFilter).
enum EventKind {
    static let decision = "decision"
    static let lifecycle = "lifecycle"
    /// A data action the SDK refused locally (`ReportEvent` `dataActionDenied`).
    static let denial = "denial"
    static let registration = "registration"
    static let policy = "policy"
    static let wipe = "wipe"
    static let feedback = "feedback"
    static let notification = "notification"
    /// A running session's launch verdict changed with the policy.
    static let compliance = "compliance"
    /// A data key released to an app, or destroyed (never the key itself).
    static let dataKey = "dataKey"
    /// Who enforces an app's export rule in its process (`ReportEvent` `fileExportEnforcement`).
    static let enforcement = "enforcement"
}
