import Foundation
import LinuxIO
import ProctorPolicy
import Testing
import TestSupport
@testable import ProctorDaemon

/// A denial's line is made from its record in the history queue, handed to the logger with
/// the writer's wake-up (`Daemon.logQueuedDenial`): in order with every other line, once,
/// whatever the history write does in between.
@Suite struct DenialLoggingTests {
    private final class Setup {
        let directory: TemporaryDirectory
        let log: KeptLog
        let daemon: Daemon
        /// Lines written before the test's (startup's).
        let startupLines: Int

        init(logCapacity: Int = 4096) throws {
            directory = try TemporaryDirectory(prefix: "proctor-denial-log")
            try FileManager.default.createDirectory(atPath: directory.path + "/config/policy.d", withIntermediateDirectories: true)
            try Data(#"{"schema": 1, "version": "one", "apps": {}}"#.utf8).write(to: directory.appending("config/policy.d/00.json"))
            log = KeptLog(capacity: logCapacity)
            daemon = try Daemon.inProcess(.inProcess(directory: directory.path), loop: try EventLoop(), keeping: log)
            daemon.handOffLogBatch()
            daemon.logger.flush()
            startupLines = log.written.count
        }

        deinit {
            daemon.closeState()
            directory.remove()
        }

        func decide(_ allowed: Bool, rule: String, uid: UInt32 = 1000) {
            daemon.record(.given(Decision(allowed: allowed, rule: rule, reason: "because")), app: "a.b", Action.print, target: nil,
                          uid: uid, closingFields: [("SESSION", "s-1")])
        }

        /// The lines written since startup once the loop's batch is handed over: their `RULE`,
        /// or message for another line.
        func lines() -> [String] {
            daemon.handOffLogBatch()
            daemon.logger.flush()
            return log.written.dropFirst(startupLines).map { event in
                event.fields.first { $0.0 == "RULE" }?.1 ?? event.message
            }
        }
    }

    @Test func aDenialIsLoggedInOrderWithTheLinesAroundIt() throws {
        let setup = try Setup()
        setup.decide(false, rule: "r1")
        setup.daemon.log(.storageFailure, "between", [])
        setup.decide(false, rule: "r2")
        setup.daemon.logger.minimumPriority = .debug  // allowed decisions are logged too, from their own entry
        setup.decide(true, rule: "a3")
        setup.decide(false, rule: "r4")
        #expect(setup.lines() == ["r1", "between", "r2", "a3", "r4"])
        let line = try #require(setup.log.written.last)
        #expect(line.message == "Denied print for a.b: because" && line.messageID == DaemonEvent.decisionDenied.messageID)
        #expect(line.fields.map(\.0) == ["APP_ID", "ACTION", "DECISION", "RULE", "POLICY_VERSION", "SESSION"])
    }

    /// The history write takes the queue the lines are made from: it hands them over first,
    /// and a later hand-over logs none of them again.
    @Test func theHistoryWriteLeavesNoDenialUnloggedNorLoggedTwice() throws {
        let setup = try Setup()
        setup.decide(false, rule: "r1")
        setup.decide(false, rule: "r2")
        setup.daemon.flushEventHistory()
        #expect(setup.daemon.events.pending.isEmpty)
        setup.decide(false, rule: "r3")
        #expect(setup.lines() == ["r1", "r2", "r3"])
        setup.decide(false, rule: "r4")
        #expect(setup.lines() == ["r1", "r2", "r3", "r4"])
    }

    /// A denial made while denials were not logged keeps no line for later.
    @Test func aDenialNotLoggedWhenMadeIsNotLoggedLater() throws {
        let setup = try Setup()
        setup.daemon.logger.minimumPriority = .error
        setup.decide(false, rule: "r1")
        setup.daemon.logger.minimumPriority = .info
        setup.decide(false, rule: "r2")
        #expect(setup.lines() == ["r2"])
    }

    /// The denials of one hand-over are one log entry, which counts as all its lines: whatever
    /// the writer keeps up with, every denial is either written, in order, or counted as dropped.
    @Test func everyDenialIsWrittenOrCountedAsDropped() throws {
        let setup = try Setup(logCapacity: 8)
        let rules = (1...setup.daemon.logLimits.pointee.denial.burst).map { "r\($0)" }  // all logged: one user's burst
        for rule in rules { setup.decide(false, rule: rule) }
        let written = setup.lines().filter { $0.hasPrefix("r") }
        #expect(written.count + setup.daemon.logger.counters.dropped == rules.count)
        #expect(written == rules.filter(written.contains), "in order")
    }

    /// Denials wait for the writer's wake-up, but no more than a quarter of the logger's
    /// capacity of them: then they are handed over at once, so that the logger wakes its writer.
    @Test func aQuarterOfTheLogCapacityIsHandedOverAtOnce() throws {
        let setup = try Setup(logCapacity: 8)
        setup.decide(false, rule: "r1")
        setup.daemon.logger.flush()
        #expect(setup.log.written.count == setup.startupLines)
        setup.decide(false, rule: "r2")
        setup.daemon.logger.flush()
        #expect(setup.log.written.count == setup.startupLines + 2)
    }

    /// A flood of denials is written to the history as soon as half the queue's bound waits,
    /// not at the next 100 ms write: a queue left to fill would drop the oldest events.
    @Test func halfTheQueueOfDenialsIsWrittenAtOnce() throws {
        let setup = try Setup()
        let half = setup.daemon.events.maxPending / 2
        for index in 0..<(half - 1) { setup.decide(false, rule: "r\(index)") }
        #expect(setup.daemon.events.pending.count == half - 1)
        setup.decide(false, rule: "r\(half - 1)")
        #expect(setup.daemon.events.pending.count == 0)
        #expect(try setup.daemon.store.lastEventID() == setup.daemon.events.lastID)
        #expect(setup.daemon.events.droppedCount == 0)
        let burst = setup.daemon.logLimits.pointee.denial.burst
        #expect(setup.lines() == (0..<burst).map { "r\($0)" }, "the lines of the written denials, in order")
    }

    /// An app denied in a loop has a burst of its denials logged (journald would otherwise drop
    /// proctord's other warnings, `UserLogLimiter`), another user's still are, and the event
    /// history keeps every one.
    @Test func aUserDeniedInALoopIsLoggedABurstAtATime() throws {
        let setup = try Setup()
        let burst = setup.daemon.logLimits.pointee.denial.burst
        for index in 0..<(burst + 50) { setup.decide(false, rule: "r\(index)") }
        setup.decide(false, rule: "other user", uid: 1001)
        #expect(setup.lines() == (0..<burst).map { "r\($0)" } + ["other user"])
        #expect(setup.daemon.events.pending.count == burst + 51)
    }
}
