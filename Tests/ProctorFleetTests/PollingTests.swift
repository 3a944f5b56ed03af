import Dispatch
import Foundation
import ProctorFleet
import Synchronization
import Testing

@Suite struct PollScheduleTests {
    @Test func successWaitsTheIntervalWithinTenPercent() {
        var schedule = PollSchedule(interval: 300)
        #expect(schedule.delay(afterSuccess: true, random: 0) == 270)
        #expect(schedule.delay(afterSuccess: true, random: 0.5) == 300)
        #expect(schedule.delay(afterSuccess: true, random: 0.999_999) < 330)
        #expect(schedule.longestDelayAfterSuccess == 330)
        #expect(PollSchedule(interval: 1).longestDelayAfterSuccess == 2)  // 1.1 s, rounded up
        var seven = PollSchedule(interval: 7)
        #expect(seven.delay(afterSuccess: true, random: 0.999_999) <= Double(seven.longestDelayAfterSuccess))
    }

    @Test func failuresBackOffExponentiallyUpToTheCapWithJitterAndSuccessResets() {
        var schedule = PollSchedule(interval: 300)
        // Ceilings 30, 60, 120, ... 3600; the delay is in [ceiling/2, ceiling).
        let ceilings = [30.0, 60, 120, 240, 480, 960, 1920, 3600, 3600, 3600]
        for ceiling in ceilings {
            var probe = schedule
            #expect(probe.delay(afterSuccess: false, random: 0) == ceiling / 2)
            #expect(schedule.delay(afterSuccess: false, random: 0.999) < ceiling)
        }
        #expect(schedule.consecutiveFailures == ceilings.count)
        for _ in 0..<100 { _ = schedule.delay(afterSuccess: false, random: 0.5) }  // no overflow after many
        #expect(schedule.delay(afterSuccess: false, random: 1) == 3600)
        _ = schedule.delay(afterSuccess: true, random: 0.5)
        #expect(schedule.consecutiveFailures == 0)
        #expect(schedule.delay(afterSuccess: false, random: 0) == 15)
    }

    @Test func aShortIntervalRetriesNoLaterThanItAndALongOneBacksOffToIt() {
        var short = PollSchedule(interval: 5)
        #expect(short.delay(afterSuccess: false, random: 0.999) < 5)
        var long = PollSchedule(interval: 86400)
        for _ in 0..<40 { _ = long.delay(afterSuccess: false, random: 0.5) }
        #expect(long.delay(afterSuccess: false, random: 1) == 86400)
    }
}

@Suite struct BundlePollerTests {
    /// Collects outcomes as the event loop would, and lets a test wait for the next one.
    final class Outcomes: Sendable {
        let received = Mutex<[BundlePoller.Outcome]>([])
        let arrived = DispatchSemaphore(value: 0)

        func add(_ outcome: BundlePoller.Outcome) {
            received.withLock { $0.append(outcome) }
            arrived.signal()
        }

        func next() throws -> BundlePoller.Outcome {
            guard arrived.wait(timeout: .now() + 30) == .success else { throw CancellationError() }
            return received.withLock { $0.last! }
        }
    }

    @Test func pollsAtOnceThenOnRequestWithTheETagAndStopsDelivering() throws {
        let server = try MDMServer()
        try server.publish("bundle one")
        let outcomes = Outcomes()
        let poller = BundlePoller(request: FetchRequest(url: server.url("bundle"), caCertificate: server.file("ca.pem"),
                                                        maximumBytes: 1 << 20),
                                  intervalSeconds: 3600) { outcomes.add($0) }
        poller.start()
        let first = try outcomes.next()
        guard case .success(.fetched(let body, _)) = first.result else { Issue.record("\(first.result)"); return }
        #expect(body == Array("bundle one".utf8))
        #expect((3240...3960).contains(first.nextPollAt - first.finishedAt))
        poller.pollNow()
        #expect(try outcomes.next().result == .success(.notModified))
        poller.forgetETag()
        poller.pollNow()
        guard case .success(.fetched) = try outcomes.next().result else { Issue.record("the ETag was kept"); return }
        poller.stop()
        poller.pollNow()
        #expect(outcomes.arrived.wait(timeout: .now() + 1) == .timedOut)
        #expect(outcomes.received.withLock { $0.count } == 3)
    }

    @Test func aFailureIsDeliveredWithTheBackoffDelay() throws {
        let outcomes = Outcomes()
        let poller = BundlePoller(request: FetchRequest(url: "file:///nonexistent/proctor/bundle", maximumBytes: 1024),
                                  intervalSeconds: 300) { outcomes.add($0) }
        poller.start()
        defer { poller.stop() }
        let outcome = try outcomes.next()
        guard case .failure = outcome.result else { Issue.record("a missing file was fetched"); return }
        #expect(outcome.consecutiveFailures == 1)
        #expect((15...30).contains(outcome.nextPollAt - outcome.finishedAt))
        poller.pollNow()
        #expect(try outcomes.next().consecutiveFailures == 2)
    }
}
