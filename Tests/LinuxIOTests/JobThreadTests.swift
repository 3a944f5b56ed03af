import Glibc
@testable import LinuxIO
import Testing

@Suite struct JobThreadTests {
    @Test func aRequestRunsTheJobOnTheThread() {
        let runs = Shared<[JobThread.Trigger]>([])
        let caller = pthread_self()
        let ranElsewhere = Shared(false)
        let thread = JobThread { trigger in
            runs.update { $0.append(trigger) }
            ranElsewhere.update { $0 = pthread_self() != caller }
        }
        thread.runSoon()
        #expect(eventually { runs.value == [.request] })
        #expect(ranElsewhere.value)
    }

    @Test func aDelayedRunComesOnceItsDeadlinePassesAndTheEarlierDeadlineWins() {
        let runs = Shared<[JobThread.Trigger]>([])
        let thread = JobThread { trigger in runs.update { $0.append(trigger) } }
        thread.run(after: .seconds(3600))
        thread.run(after: .milliseconds(20))  // earlier: replaces the hour
        thread.run(after: .seconds(3600))  // later than the one pending: ignored
        #expect(eventually { runs.value == [.deadline] })
        thread.waitUntilIdle()
        #expect(runs.value == [.deadline])
    }

    @Test func requestsMadeWhileTheJobRunsAreServedAfterItOnce() {
        let runs = Shared(0)
        let release = Shared(false)
        let thread = JobThread { _ in
            runs.update { $0 += 1 }
            _ = eventually { release.value }
        }
        thread.runSoon()
        #expect(eventually { runs.value == 1 })
        thread.runSoon()
        thread.runSoon()
        release.update { $0 = true }
        #expect(eventually { runs.value == 2 })
        thread.waitUntilIdle()
        #expect(runs.value == 2)
    }

    @Test func aStoppedThreadRunsNothingMore() {
        let runs = Shared(0)
        let thread = JobThread { _ in runs.update { $0 += 1 } }
        thread.stop()
        thread.runSoon()
        thread.run(after: .milliseconds(1))
        usleep(50_000)
        #expect(runs.value == 0)
    }
}
