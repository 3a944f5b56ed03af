import Dispatch
import Glibc
import Synchronization
import LinuxIO
import Testing
@testable import SystemdKit

/// Records what reaches it; optionally holds the first write until released, so a test can
/// fill the logger's queue while the background thread is busy.
private final class RecordingSink: LogSink {
    private let events = Mutex<[LogEvent]>([])
    private let holdFirstWrite: Bool
    let firstWriteStarted = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let failing: Bool

    init(holdFirstWrite: Bool = false, failing: Bool = false) {
        self.holdFirstWrite = holdFirstWrite
        self.failing = failing
    }

    var written: [LogEvent] { events.withLock { $0 } }

    func write(_ event: LogEvent) throws(LogSinkError) {
        let isFirst = events.withLock { events in
            events.append(event)
            return events.count == 1
        }
        if isFirst && holdFirstWrite {
            firstWriteStarted.signal()
            release.wait()
        }
        if failing { throw .journal(Errno(rawValue: 111)) }
    }
}

@Suite struct LoggerTests {
    private let dropsID = MessageID("9821e4c6e36d418e98e4f9d4d11f6aa9")
    private let eventID = MessageID("b1a2f28f21824eeaa03407dabfd373a4")

    private func event(_ number: Int, _ priority: LogPriority = .info) -> LogEvent {
        LogEvent(eventID, priority, "event \(number)", fields: [("NUMBER", String(number))])
    }

    @Test func deliversEventsInOrder() {
        let sink = RecordingSink()
        let logger = Logger(sink: sink, droppedMessagesID: dropsID)
        for number in 0 ..< 1000 { #expect(logger.log(event(number))) }
        logger.flush()
        #expect(sink.written.map(\.message) == (0 ..< 1000).map { "event \($0)" })
        #expect(logger.droppedCount == 0)
    }

    @Test func filtersBelowMinimumPriorityBeforeQueueing() {
        let sink = RecordingSink()
        let logger = Logger(sink: sink, minimumPriority: .info, droppedMessagesID: dropsID)
        #expect(!logger.isEnabled(.debug))
        #expect(logger.isEnabled(.info) && logger.isEnabled(.emergency))
        logger.log(event(1, .debug))
        logger.log(event(2, .warning))
        logger.minimumPriority = .debug
        logger.log(event(3, .debug))
        logger.minimumPriority = .error
        logger.log(event(4, .warning))
        logger.flush()
        #expect(sink.written.map(\.message) == ["event 2", "event 3"])
    }

    @Test func dropsWhenFullWithoutBlockingAndReportsOnceDrained() {
        let sink = RecordingSink(holdFirstWrite: true)
        let logger = Logger(sink: sink, capacity: 4, droppedMessagesID: dropsID)
        logger.log(event(0))
        sink.firstWriteStarted.wait()  // the background thread is now stuck in the sink
        for number in 1 ... 4 { #expect(logger.log(event(number))) }
        for number in 5 ... 7 { #expect(!logger.log(event(number))) }
        #expect(logger.droppedCount == 3)
        sink.release.signal()
        logger.flush()

        let written = sink.written
        #expect(written.map(\.message) == ["event 0", "event 1", "event 2", "event 3", "event 4", "3 log messages dropped"])
        let report = written.last
        #expect(report?.messageID == dropsID)
        #expect(report?.priority == .warning)
        #expect(report?.field("DROPPED") == "3")
        #expect(logger.droppedCount == 3, "the total stays readable after the report")

        logger.log(event(8))
        logger.flush()
        #expect(sink.written.count == 7, "no second report without new drops")
    }

    /// What an event loop logs waits for one `wakeWriter()` per burst; a queue a quarter
    /// full wakes the writer by itself.
    @Test func eventsLoggedWithoutWakingWaitForTheWakeUp() {
        let sink = RecordingSink()
        let logger = Logger(sink: sink, capacity: 8, droppedMessagesID: dropsID)
        logger.log(event(0))
        logger.flush()  // the writer now sleeps
        func written(reaching count: Int) -> [String] {
            let deadline = MonotonicClock.nanoseconds() + 10_000_000_000
            while sink.written.count < count, MonotonicClock.nanoseconds() < deadline { usleep(1_000) }
            return sink.written.map(\.message)
        }
        #expect(logger.logWithoutWaking(event(1)))
        usleep(50_000)
        #expect(sink.written.count == 1, "not written while the writer sleeps")
        logger.wakeWriter()
        #expect(written(reaching: 2) == ["event 0", "event 1"])

        usleep(50_000)  // the writer sleeps again
        logger.logWithoutWaking(event(2))
        logger.logWithoutWaking(event(3))  // 2 of 8: a quarter
        #expect(written(reaching: 4) == ["event 0", "event 1", "event 2", "event 3"])
    }

    /// A deferred event is made on the writer's thread, in its place in the queue; one below
    /// the minimum priority or dropped from a full queue is never made.
    @Test func deferredEventsAreMadeOnTheWriterThreadInOrder() {
        let sink = RecordingSink(holdFirstWrite: true)
        let logger = Logger(sink: sink, capacity: 3, droppedMessagesID: dropsID)
        let made = Mutex<[Int]>([])
        let callerThread = pthread_self()
        func deferred(_ number: Int, _ priority: LogPriority = .warning) -> Bool {
            let batch = Logger.Batch()
            batch.append(eventID, priority, deferred: MadeLater {
                made.withLock { $0.append(number) }
                #expect(pthread_equal(pthread_self(), callerThread) == 0, "made on the writer's thread")
                return ("event \(number)", [("NUMBER", String(number))])
            })
            return logger.logWithoutWaking(batch) == 0
        }
        logger.log(event(0))
        sink.firstWriteStarted.wait()  // the writer is stuck in the sink
        #expect(deferred(1))
        #expect(deferred(2, .debug), "below the minimum: discarded, not dropped")
        #expect(logger.log(event(3)))
        #expect(deferred(4))
        #expect(!deferred(5), "the queue is full")
        #expect(made.withLock { $0 }.isEmpty, "nothing made on the caller's thread")
        sink.release.signal()
        logger.flush()

        let written = sink.written
        #expect(written.map(\.message) == ["event 0", "event 1", "event 3", "event 4", "1 log messages dropped"])
        #expect(written[1].messageID == eventID && written[1].priority == .warning)
        #expect(written[3].fields.map(\.0) == ["NUMBER"] && written[3].field("NUMBER") == "4")
        #expect(made.withLock { $0 } == [1, 4])
    }

    /// A batch is queued in order, as its events one by one would be: below the minimum
    /// discarded, past the capacity dropped and reported; it is empty afterwards.
    @Test func aBatchIsQueuedAsItsEventsOneByOne() {
        let sink = RecordingSink(holdFirstWrite: true)
        let logger = Logger(sink: sink, capacity: 4, droppedMessagesID: dropsID)
        func batch(_ numbers: [Int], _ priority: LogPriority = .warning) -> Logger.Batch {
            let batch = Logger.Batch()
            for number in numbers {
                batch.append(eventID, priority, deferred: MadeLater { ("event \(number)", [("NUMBER", String(number))]) })
            }
            return batch
        }
        #expect(logger.logWithoutWaking(Logger.Batch()) == 0)
        let first = batch([1, 2])
        #expect(logger.logWithoutWaking(first) == 0 && first.count == 0, "an empty queue takes the batch whole")
        logger.wakeWriter()
        sink.firstWriteStarted.wait()  // events 1 and 2 taken; the writer is stuck in the sink
        #expect(logger.logWithoutWaking(batch([3], .debug)) == 0, "below the minimum: discarded, not dropped")
        #expect(logger.log(event(4)))
        let second = batch([5, 6, 7, 8])
        #expect(logger.logWithoutWaking(second) == 1 && second.count == 0, "room for three after event 4")
        #expect(logger.counters.dropped == 1)
        sink.release.signal()
        logger.flush()
        #expect(sink.written.map(\.message) == ["event 1", "event 2", "event 4", "event 5", "event 6", "event 7",
                                                "1 log messages dropped"])
        #expect(sink.written[5].field("NUMBER") == "7" && sink.written[5].priority == .warning)
    }

    @Test func countsSinkFailures() {
        let sink = RecordingSink(failing: true)
        let logger = Logger(sink: sink, droppedMessagesID: dropsID)
        logger.log(event(1))
        logger.log(event(2))
        logger.flush()
        #expect(logger.counters == Logger.Counters(dropped: 0, sinkFailures: 2, lastSinkFailure: .journal(Errno(rawValue: 111))))
    }

    @Test func reportsOnlyTheFirstSinkFailure() {
        let reported = Mutex<[LogSinkError]>([])
        let logger = Logger(sink: RecordingSink(failing: true), droppedMessagesID: dropsID,
                            onFirstSinkFailure: { error in reported.withLock { $0.append(error) } })
        for number in 0 ..< 5 { logger.log(event(number)) }
        logger.flush()
        #expect(reported.withLock { $0 } == [.journal(Errno(rawValue: 111))])
        #expect(logger.counters.sinkFailures == 5)
    }

    /// Regression: proctord never ended on SIGTERM when its stderr was a pipe nobody read,
    /// because the shutdown flush waited for a write that could not finish.
    @Test func flushWithATimeoutReturnsWhileTheSinkIsBlocked() throws {
        let pipe = try Pipe()
        let logger = Logger(sink: StderrSink(descriptor: pipe.write), droppedMessagesID: dropsID)
        // 64 KiB of pipe buffer, then the writer blocks: nobody reads the pipe.
        let line = LogEvent(eventID, .info, String(repeating: "x", count: 1000))
        for _ in 0 ..< 200 { logger.log(line) }
        #expect(!logger.flush(timeout: .milliseconds(200)))
        // Read until everything is through, so the logger's thread is not left blocked.
        var drained = 0
        while !logger.flush(timeout: .milliseconds(20)) { drained += pipe.readAvailable().utf8.count }
        drained += pipe.readAvailable().utf8.count
        #expect(drained == 200 * "info \(line.message)\n".utf8.count)
    }

    @Test func manyThreadsLogConcurrently() async {
        let sink = RecordingSink()
        let logger = Logger(sink: sink, capacity: 100_000, droppedMessagesID: dropsID)
        await withTaskGroup(of: Void.self) { group in
            for task in 0 ..< 8 {
                group.addTask { for number in 0 ..< 500 { logger.log(event(task * 1000 + number)) } }
            }
        }
        logger.flush()
        #expect(sink.written.count == 4000)
        #expect(Set(sink.written.map(\.message)).count == 4000)
    }

    @Test func releasingTheLoggerEndsItsThread() async throws {
        weak var released: Logger?
        do {
            let logger = Logger(sink: RecordingSink(), droppedMessagesID: dropsID)
            released = logger
            logger.log(event(1))
            logger.flush()
        }
        // The background thread holds the logger only while writing a batch.
        for _ in 0 ..< 100 where released != nil { try await Task.sleep(for: .milliseconds(10)) }
        #expect(released == nil)
    }

    @Test func stderrSinkWritesLinesToItsDescriptor() throws {
        let pipe = try Pipe()
        let logger = Logger(sink: StderrSink(descriptor: pipe.write), droppedMessagesID: dropsID)
        logger.log(event(1, .warning))
        logger.log(event(2, .notice))
        logger.flush()
        #expect(pipe.readAvailable() == "warning event 1 NUMBER=1\nnotice event 2 NUMBER=2\n")
    }

    /// Regression: libsystemd reports success when journald's socket is missing, so with no
    /// journald every line was lost and nothing counted it.
    @Test func journalSinkReportsAMissingJournald() {
        let sink = JournalSink(syslogIdentifier: "proctor-test", socketAddress: "/nonexistent/journal/socket")
        #expect(throws: LogSinkError.journal(.noSuchFileOrDirectory)) { try sink.write(event(1)) }
    }

    /// An entry of many events counts as that many against the capacity: the events that fit
    /// are queued, in order, even part of an entry, and the rest are dropped and reported.
    @Test func anEntryOfManyEventsCountsAsThemAll() {
        let sink = RecordingSink(holdFirstWrite: true)
        let logger = Logger(sink: sink, capacity: 6, droppedMessagesID: dropsID)
        logger.log(event(0))
        sink.firstWriteStarted.wait()  // the writer is stuck in the sink with event 0
        let batch = Logger.Batch()
        batch.append(eventID, .warning, deferred: Numbered([1, 2, 3]))
        batch.append(eventID, .warning, deferred: Numbered([]))
        #expect(batch.count == 3)
        #expect(logger.logWithoutWaking(batch) == 0 && batch.count == 0)
        #expect(logger.log(event(4)))
        batch.append(eventID, .debug, deferred: Numbered([90, 91]))  // below the minimum: discarded
        batch.append(eventID, .warning, deferred: Numbered([5, 6, 7]))
        #expect(batch.count == 5)
        #expect(logger.logWithoutWaking(batch) == 1, "room for two of the three")
        #expect(!logger.log(event(8)), "the queue is full")
        #expect(logger.counters.dropped == 2)
        sink.release.signal()
        logger.flush()
        #expect(sink.written.map(\.message) == ["event 0", "event 1", "event 2", "event 3", "event 4", "event 5", "event 6",
                                                "2 log messages dropped"])
    }

    @Test func stderrSinkReportsAClosedDescriptor() {
        #expect(throws: LogSinkError.stream(descriptor: -1, .badFileDescriptor)) {
            try StderrSink(descriptor: -1).write(event(1))
        }
    }
}

/// Deferred log content of one event, which `make` makes.
private final class MadeLater: DeferredLogContent {
    let make: @Sendable () -> (message: String, fields: [(String, String)])
    init(_ make: @escaping @Sendable () -> (message: String, fields: [(String, String)])) { self.make = make }
    var eventCount: Int { 1 }
    func logContent(_ index: Int) -> (message: String, fields: [(String, String)]) { make() }
}

/// Deferred log content of several events, "event N" for each of `numbers`.
private final class Numbered: DeferredLogContent {
    let numbers: [Int]
    init(_ numbers: [Int]) { self.numbers = numbers }
    var eventCount: Int { numbers.count }
    func logContent(_ index: Int) -> (message: String, fields: [(String, String)]) {
        ("event \(numbers[index])", [("NUMBER", String(numbers[index]))])
    }
}
