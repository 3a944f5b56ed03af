import Foundation
import Glibc
@testable import LinuxIO
import Testing

@Suite struct EventLoopTests {
    @Test func timersFireInDeadlineOrderThenSchedulingOrder() throws {
        let order = Shared<[String]>([])
        let running = try LoopThread { loop in
            loop.schedule(after: .milliseconds(60)) { order.update { $0.append("60ms") } }
            loop.schedule(after: .milliseconds(20)) { order.update { $0.append("20ms-a") } }
            loop.schedule(after: .milliseconds(40)) { order.update { $0.append("40ms") } }
            loop.schedule(after: .milliseconds(20)) { order.update { $0.append("20ms-b") } }
        }
        defer { running.stop() }
        #expect(eventually { order.value.count == 4 })
        #expect(order.value == ["20ms-a", "20ms-b", "40ms", "60ms"])
    }

    @Test func aTimerNeverFiresEarly() throws {
        let elapsed = Shared<Duration?>(nil)
        let start = ContinuousClock.now
        let running = try LoopThread { loop in
            loop.schedule(after: .milliseconds(50)) { elapsed.update { $0 = ContinuousClock.now - start } }
        }
        defer { running.stop() }
        #expect(eventually { elapsed.value != nil })
        #expect(elapsed.value! >= .milliseconds(50))
    }

    /// The loop's timerfd is set for the earliest timer when it blocks; a timer scheduled later
    /// with an earlier deadline must set it again, or it would fire with the later one.
    @Test func aTimerEarlierThanTheOneTheLoopWaitsForFiresFirst() throws {
        let fired = Shared<[String]>([])
        let running = try LoopThread { loop in
            loop.schedule(after: .seconds(60)) { fired.update { $0.append("60s") } }
        }
        defer { running.stop() }
        usleep(20_000)  // the loop is waiting for the 60 s timer
        running.loop.execute { running.loop.schedule(after: .milliseconds(20)) { fired.update { $0.append("20ms") } } }
        #expect(eventually { fired.value == ["20ms"] })
    }

    @Test func cancelledTimersDoNotFire() throws {
        let fired = Shared<[String]>([])
        let running = try LoopThread { loop in
            let cancelled = loop.schedule(after: .milliseconds(20)) { fired.update { $0.append("cancelled") } }
            loop.schedule(after: .milliseconds(40)) { fired.update { $0.append("kept") } }
            loop.cancel(cancelled)
            loop.cancel(cancelled)
        }
        defer { running.stop() }
        #expect(eventually { fired.value.contains("kept") })
        usleep(30_000)
        #expect(fired.value == ["kept"])
    }

    @Test func repeatingTimerTicksUntilItCancelsItself() throws {
        let ticks = Shared(0)
        let running = try LoopThread { loop in
            var handle: TimerHandle?
            handle = loop.schedule(every: .milliseconds(5)) {
                if ticks.update({ $0 += 1; return $0 }) == 5 { loop.cancel(handle!) }
            }
        }
        defer { running.stop() }
        #expect(eventually { ticks.value == 5 })
        usleep(40_000)
        #expect(ticks.value == 5)
    }

    @Test func aStalledLoopSkipsMissedTicksInsteadOfFiringABurst() throws {
        let ticks = Shared<[ContinuousClock.Instant]>([])
        let stallEnded = Shared<ContinuousClock.Instant?>(nil)
        let running = try LoopThread { loop in
            loop.schedule(every: .milliseconds(10)) { ticks.update { $0.append(.now) } }
        }
        defer { running.stop() }
        #expect(eventually { ticks.value.count >= 2 })
        running.loop.execute {
            usleep(100_000)  // a handler stuck for ten periods
            stallEnded.update { $0 = .now }
        }
        #expect(eventually { stallEnded.value != nil && ticks.value.last! > stallEnded.value! })
        usleep(30_000)
        let afterStall = ticks.value.filter { $0 > stallEnded.value! }
        #expect(afterStall.count >= 2)
        // One catch-up tick at once, the next a full period later: not nine in a row.
        #expect(afterStall[1] - afterStall[0] >= .milliseconds(9))
    }

    @Test func executeRunsWorkFromOtherThreadsInOrderOnTheLoopThread() throws {
        let running = try LoopThread()
        defer { running.stop() }
        let loopThread = running.sync { pthread_self() }
        let seen = Shared<[Int]>([])
        let wrongThread = Shared(false)
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for index in 0..<250 {
                running.loop.execute {
                    if pthread_equal(pthread_self(), loopThread) == 0 { wrongThread.update { $0 = true } }
                    seen.update { $0.append(worker * 1000 + index) }
                }
            }
        }
        #expect(eventually { seen.value.count == 1000 })
        #expect(!wrongThread.value)
        for worker in 0..<4 {
            let mine = seen.value.filter { $0 / 1000 == worker }
            #expect(mine == mine.sorted(), "work from one thread runs in the order it was handed over")
        }
    }

    @Test func registrationReportsReadinessUntilUnregistered() throws {
        let (reader, writer) = try FileDescriptor.pipe()
        defer { try? reader.close(); try? writer.close() }
        try reader.setNonBlocking()
        let reads = Shared(0)
        let running = try LoopThread { loop in
            var registration: Registration?
            registration = try loop.register(reader, events: .readable) { readiness in
                #expect(readiness.contains(.readable))
                var byte: UInt8 = 0
                _ = withUnsafeMutableBytes(of: &byte) { try? reader.read(into: $0) }
                if reads.update({ $0 += 1; return $0 }) == 2 { loop.unregister(registration!) }
            }
        }
        defer { running.stop() }
        try writer.writeAll([1])
        #expect(eventually { reads.value == 1 })
        try writer.writeAll([2])
        #expect(eventually { reads.value == 2 })
        try writer.writeAll([3])
        usleep(30_000)
        #expect(reads.value == 2)
    }

    /// The loop calls a handler without retaining it: one that unregisters itself is kept,
    /// with what it captured, until it has returned.
    @Test func aHandlerThatUnregistersItselfRunsToItsEnd() throws {
        let (reader, writer) = try FileDescriptor.pipe()
        defer { try? reader.close(); try? writer.close() }
        let events = Shared<[String]>([])
        let running = try LoopThread { loop in
            var registration: Registration?
            let witness = ReleaseWitness(events)
            registration = try loop.register(reader, events: .readable) { [witness] _ in
                loop.unregister(registration!)
                witness.note("kept: \(loop.keptUnregisteredHandlers)")
            }
        }
        defer { running.stop() }
        try writer.writeAll([1])
        #expect(eventually { events.value == ["kept: 1", "released"] })
        #expect(running.sync { running.loop.keptUnregisteredHandlers } == 0)
    }

    @Test func registeringTheSameDescriptorTwiceFails() throws {
        let loop = try EventLoop()
        let (reader, writer) = try FileDescriptor.pipe()
        defer { try? reader.close(); try? writer.close() }
        let registration = try loop.register(reader, events: .readable) { _ in }
        #expect(throws: Errno.fileExists) { _ = try loop.register(reader, events: .readable) { _ in } }
        loop.unregister(registration)
        loop.unregister(registration)
        _ = try loop.register(reader, events: .readable) { _ in }
    }

    @Test func aHandlerUnregisteringAnotherSilencesItsPendingEvent() throws {
        let (readerA, writerA) = try FileDescriptor.pipe()
        let (readerB, writerB) = try FileDescriptor.pipe()
        defer { for fd in [readerA, writerA, readerB, writerB] { try? fd.close() } }
        let calls = Shared<[String]>([])
        // Both become readable before the loop waits, so both land in the same batch.
        try writerA.writeAll([1])
        try writerB.writeAll([1])
        let running = try LoopThread { loop in
            var registrationA: Registration?
            var registrationB: Registration?
            registrationA = try loop.register(readerA, events: .readable) { _ in
                calls.update { $0.append("A") }
                loop.unregister(registrationA!)
                loop.unregister(registrationB!)
            }
            registrationB = try loop.register(readerB, events: .readable) { _ in
                calls.update { $0.append("B") }
                loop.unregister(registrationA!)
                loop.unregister(registrationB!)
            }
        }
        defer { running.stop() }
        #expect(eventually { !calls.value.isEmpty })
        usleep(30_000)
        #expect(calls.value.count == 1)
    }

    @Test func signalSentToTheLoopThreadArrivesThroughTheSignalfd() throws {
        let received = Shared<[CInt]>([])
        let running = try LoopThread()
        defer { running.stop() }
        let registered = running.sync { () -> Bool in
            (try? running.loop.onSignal([SIGUSR2]) { signal in received.update { $0.append(signal) } }) != nil
        }
        #expect(registered)
        let loopThread = running.sync { pthread_self() }
        pthread_kill(loopThread, SIGUSR2)
        #expect(eventually { received.value == [SIGUSR2] })
    }
}
