import Dispatch
import Glibc
import LinuxIO
import Synchronization

/// Logs events without ever blocking the caller: `log` puts the event on a bounded queue
/// that one background thread drains into the sink. When the queue is full the event is
/// dropped and counted; once the queue has drained, one event of kind `droppedMessagesID`
/// ("N log messages dropped", field `DROPPED=N`) reports how many were lost since the last
/// such report. Events below `minimumPriority` are discarded before they are queued.
///
/// A sink that fails (journald not running, stderr closed) loses the event; each failure
/// is counted in `counters`, and the first one is handed to `onFirstSinkFailure` so the
/// owner can say once, somewhere else, that its log is going nowhere.
public final class Logger: Sendable {
    /// The sink's failures and the drops, counted since the logger was made.
    public struct Counters: Sendable, Equatable {
        /// Events discarded because the queue was full.
        public var dropped: Int
        /// Events the sink failed to write (journald gone, stderr closed).
        public var sinkFailures: Int
        /// The last sink failure, if any.
        public var lastSinkFailure: LogSinkError?
    }

    /// What waits in the queue: an event, or the events `indices` of what the writer thread
    /// makes them from (`Batch.append(_:_:deferred:)`).
    fileprivate enum Entry: Sendable {
        case event(LogEvent)
        case deferred(MessageID, LogPriority, any DeferredLogContent, indices: Range<Int>)

        var priority: LogPriority {
            switch self {
            case .event(let event): event.priority
            case .deferred(_, let priority, _, _): priority
            }
        }

        /// The events it stands for, which the capacity counts.
        var eventCount: Int {
            switch self {
            case .event: 1
            case .deferred(_, _, _, let indices): indices.count
            }
        }

        /// Its first `count` events.
        func prefix(_ count: Int) -> Entry {
            guard case .deferred(let messageID, let priority, let content, let indices) = self else { return self }
            return .deferred(messageID, priority, content, indices: indices.prefix(count))
        }

        /// Calls `body` with each event, made now if it was deferred (`LogEvent.init` checks
        /// its field names here).
        func forEachEvent(_ body: (LogEvent) -> Void) {
            switch self {
            case .event(let event):
                body(event)
            case .deferred(let messageID, let priority, let content, let indices):
                for index in indices {
                    let (message, fields) = content.logContent(index)
                    body(LogEvent(messageID, priority, message, fields: fields))
                }
            }
        }
    }

    private struct State: ~Copyable {
        var queue: [Entry] = []
        /// The events `queue` stands for (an entry may stand for many).
        var queuedEvents = 0
        var drainerIsWaiting = false
        var drainerIsWriting = false
        var droppedSinceReport = 0
        var counters = Counters(dropped: 0, sinkFailures: 0, lastSinkFailure: nil)
        var flushWaiters: [DispatchSemaphore] = []
    }

    /// The most events waiting to be written at once.
    public let capacity: Int
    private let sink: any LogSink
    private let droppedMessagesID: MessageID
    private let state = Mutex(State())
    private let wakeDrainer = DispatchSemaphore(value: 0)
    private let minimumPriorityValue: Atomic<Int32>
    private let onFirstSinkFailure: @Sendable (LogSinkError) -> Void

    /// A logger writing to `sink` from its own thread.
    /// - Parameters:
    ///   - capacity: how many events may wait (at least 1).
    ///   - droppedMessagesID: the `MESSAGE_ID` of the drop report.
    ///   - onFirstSinkFailure: called once, on the logger's thread, with the sink's first
    ///     failure (later ones are only counted).
    public init(sink: any LogSink, capacity: Int = 4096, minimumPriority: LogPriority = .info, droppedMessagesID: MessageID,
                onFirstSinkFailure: @escaping @Sendable (LogSinkError) -> Void = { _ in }) {
        precondition(capacity > 0, "a log queue needs room for at least one event")
        self.capacity = capacity
        self.sink = sink
        self.droppedMessagesID = droppedMessagesID
        self.onFirstSinkFailure = onFirstSinkFailure
        minimumPriorityValue = Atomic(minimumPriority.rawValue)
        Drainer(logger: self).start()
    }

    /// Events still queued when the last reference goes are discarded: call `flush()` first.
    /// The background thread, woken here, finds the logger gone and ends.
    deinit {
        wakeDrainer.signal()
    }

    /// The least severe priority that is logged; may be changed at any time (on reload).
    public var minimumPriority: LogPriority {
        get { LogPriority(rawValue: minimumPriorityValue.load(ordering: .relaxed)) ?? .info }
        set { minimumPriorityValue.store(newValue.rawValue, ordering: .relaxed) }
    }

    /// Whether an event of `priority` would be logged; check it before building an
    /// expensive event.
    public func isEnabled(_ priority: LogPriority) -> Bool {
        priority.rawValue <= minimumPriorityValue.load(ordering: .relaxed)
    }

    /// Events dropped because the queue was full, since the logger was made.
    public var droppedCount: Int { state.withLock { $0.counters.dropped } }

    /// Drops and sink failures so far.
    public var counters: Counters { state.withLock { $0.counters } }

    /// Queues `event` unless it is below `minimumPriority`; never waits for the sink.
    /// Returns false when the event was dropped because the queue was full.
    @discardableResult
    public func log(_ event: LogEvent) -> Bool {
        queue(.event(event), priority: event.priority, wakingWriter: true)
    }

    /// Queues `event` like `log(_:)` but leaves the writer thread asleep until `wakeWriter()`
    /// (or a later `log(_:)`): a thread that logs in bursts, such as an event loop, then
    /// costs the writer one wake-up per burst instead of one per event. A queue a quarter
    /// full wakes the writer at once, so a long burst is written, not dropped.
    @discardableResult
    public func logWithoutWaking(_ event: LogEvent) -> Bool {
        queue(.event(event), priority: event.priority, wakingWriter: false)
    }

    /// Events one thread collects and then queues together (`logWithoutWaking(_:)` of a
    /// batch): an event loop that logs an event on many calls takes the logger's lock, and
    /// so makes its atomic operations, once per batch instead of once per event. A class
    /// holding its entries behind a pointer, so that its owner keeps it in a constant: a
    /// change to a variable stored in a class is a run-time exclusivity check (≈ 90
    /// instructions). For one thread only.
    public final class Batch {
        fileprivate struct Contents {
            var entries: [Entry] = []
            var eventCount = 0
        }
        fileprivate let contents = UnsafeMutablePointer<Contents>.allocate(capacity: 1)

        public init() { contents.initialize(to: Contents()) }

        deinit { contents.deinitialize(count: 1).deallocate() }

        /// The events in the batch.
        public var count: Int { contents.pointee.eventCount }

        /// Adds the events whose messages and fields `content` makes on the writer thread,
        /// when they are written: the batch and the queue keep one reference for all of them.
        /// For frequent events whose text and fields cost more to build than to keep (denials).
        /// Their field names are checked as `LogEvent.init` checks them, when they are made.
        public func append(_ messageID: MessageID, _ priority: LogPriority, deferred content: any DeferredLogContent) {
            let count = content.eventCount
            guard count > 0 else { return }
            contents.pointee.entries.append(.deferred(messageID, priority, content, indices: 0..<count))
            contents.pointee.eventCount += count
        }
    }

    /// Queues the batch's events in order, as `logWithoutWaking` one by one would (those
    /// below `minimumPriority` discarded, those past `capacity` dropped and counted), and
    /// empties the batch. Returns how many were dropped.
    @discardableResult
    public func logWithoutWaking(_ batch: Batch) -> Int {
        let contents = batch.contents
        guard !contents.pointee.entries.isEmpty else { return 0 }
        let minimum = minimumPriorityValue.load(ordering: .relaxed)
        if contents.pointee.entries.contains(where: { $0.priority.rawValue > minimum }) {
            contents.pointee.entries.removeAll { $0.priority.rawValue > minimum }
            contents.pointee.eventCount = contents.pointee.entries.reduce(0) { $0 + $1.eventCount }
        }
        let capacity = capacity
        let (dropped, wake) = state.withLock { state -> (Int, Bool) in
            let count = contents.pointee.eventCount
            let queued = min(count, capacity - state.queuedEvents), dropped = count - queued
            if state.queue.isEmpty, dropped == 0 {
                // The usual case: the buffers change places, no entry is copied, and the
                // batch gets the queue's empty one, its capacity kept from the last write.
                swap(&state.queue, &contents.pointee.entries)
            } else {
                var room = queued
                for entry in contents.pointee.entries where room > 0 {
                    let taken = entry.prefix(room)  // the last that fits may fit in part
                    state.queue.append(taken)
                    room -= taken.eventCount
                }
            }
            state.queuedEvents += queued
            state.droppedSinceReport += dropped
            state.counters.dropped += dropped
            guard queued > 0, state.drainerIsWaiting, state.queuedEvents >= max(1, capacity / 4) else { return (dropped, false) }
            state.drainerIsWaiting = false
            return (dropped, true)
        }
        contents.pointee.entries.removeAll(keepingCapacity: true)
        contents.pointee.eventCount = 0
        if wake { wakeDrainer.signal() }
        return dropped
    }

    /// Wakes the writer thread if events wait for it.
    public func wakeWriter() {
        let wake = state.withLock { state -> Bool in
            guard state.drainerIsWaiting, !state.queue.isEmpty else { return false }
            state.drainerIsWaiting = false
            return true
        }
        if wake { wakeDrainer.signal() }
    }

    private func queue(_ entry: Entry, priority: LogPriority, wakingWriter: Bool) -> Bool {
        guard isEnabled(priority) else { return true }
        let capacity = capacity
        let (queued, wake) = state.withLock { state -> (Bool, Bool) in
            guard state.queuedEvents < capacity else {
                state.droppedSinceReport += 1
                state.counters.dropped += 1
                return (false, false)
            }
            state.queue.append(entry)
            state.queuedEvents += 1
            guard state.drainerIsWaiting, wakingWriter || state.queuedEvents >= max(1, capacity / 4) else { return (true, false) }
            state.drainerIsWaiting = false
            return (true, true)
        }
        if wake { wakeDrainer.signal() }
        return queued
    }

    /// Blocks until every event queued before the call has reached the sink (and any drop
    /// report with it). For tests; never call it where blocking matters, and at shutdown
    /// prefer `flush(timeout:)`: a sink that blocks (stderr a pipe nobody reads) blocks this.
    public func flush() {
        _ = flush(waitingAtMost: nil)
    }

    /// `flush()` that gives up after `timeout`; returns whether everything was written.
    /// Events still queued then stay queued (the process is usually about to exit).
    @discardableResult
    public func flush(timeout: Duration) -> Bool {
        flush(waitingAtMost: timeout)
    }

    private func flush(waitingAtMost timeout: Duration?) -> Bool {
        let done = DispatchSemaphore(value: 0)
        let (mustWait, wake) = state.withLock { state -> (Bool, Bool) in
            guard !state.queue.isEmpty || state.drainerIsWriting || state.droppedSinceReport > 0 else { return (false, false) }
            state.flushWaiters.append(done)
            let wake = state.drainerIsWaiting
            state.drainerIsWaiting = false
            return (true, wake)
        }
        if wake { wakeDrainer.signal() }
        guard mustWait else { return true }
        guard let timeout else {
            done.wait()
            return true
        }
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = max(0, seconds) * 1_000_000_000 + max(0, attoseconds) / 1_000_000_000
        return done.wait(timeout: .now() + .nanoseconds(Int(clamping: nanoseconds))) == .success
    }

    /// The background side, holding the logger weakly so that dropping the last reference
    /// to the logger ends the thread.
    private final class Drainer: Sendable {
        private weak let logger: Logger?
        private let wake: DispatchSemaphore

        init(logger: Logger) {
            self.logger = logger
            wake = logger.wakeDrainer
        }

        /// Runs `run()` on a thread of its own.
        func start() { DetachedThread.start { self.run() } }

        func run() {
            while true {
                let outcome: DrainOutcome
                do {
                    // The strong reference lives only while a batch is written, never while waiting.
                    guard let logger else { return }
                    outcome = logger.drainOnce()
                }
                if outcome == .idle { wake.wait() }
            }
        }
    }

    private enum DrainOutcome { case wrote, idle }

    /// Writes one batch or the drop report; says whether there was work.
    private func drainOnce() -> DrainOutcome {
        enum Step { case write([Entry]), reportDrops(Int), wait }
        let (step, finishedFlushes) = state.withLock { state -> (Step, [DispatchSemaphore]) in
            if !state.queue.isEmpty {
                let batch = state.queue
                state.queue.removeAll(keepingCapacity: true)
                state.queuedEvents = 0
                state.drainerIsWriting = true
                return (.write(batch), [])
            }
            if state.droppedSinceReport > 0 {
                let dropped = state.droppedSinceReport
                state.droppedSinceReport = 0
                state.drainerIsWriting = true
                return (.reportDrops(dropped), [])
            }
            state.drainerIsWriting = false
            let waiters = state.flushWaiters
            state.flushWaiters.removeAll()
            state.drainerIsWaiting = true
            return (.wait, waiters)
        }
        for waiter in finishedFlushes { waiter.signal() }
        switch step {
        case .write(let batch):
            for entry in batch { entry.forEachEvent(write) }
            return .wrote
        case .reportDrops(let count):
            write(LogEvent(droppedMessagesID, .warning, "\(count) log messages dropped", fields: [("DROPPED", String(count))]))
            return .wrote
        case .wait:
            return .idle
        }
    }

    private func write(_ event: LogEvent) {
        do {
            try sink.write(event)
        } catch {
            let isFirst = state.withLock {
                $0.counters.sinkFailures += 1
                $0.counters.lastSinkFailure = error
                return $0.counters.sinkFailures == 1
            }
            if isFirst { onFirstSinkFailure(error) }
        }
    }
}
