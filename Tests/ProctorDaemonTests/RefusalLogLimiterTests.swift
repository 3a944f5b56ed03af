@testable import ProctorDaemon
import Testing

@Suite struct RefusalLogLimiterTests {
    private let second: UInt64 = 1_000_000_000

    @Test func aBurstIsLoggedThenTheRestIsCounted() {
        var limiter = RefusalLogLimiter(burst: 3, window: .seconds(10))
        let admissions = (0..<5).map { _ in limiter.admit(uid: 1000, now: 1 * second) }
        #expect(admissions == [.log(suppressedBefore: 0), .log(suppressedBefore: 0), .log(suppressedBefore: 0),
                               .suppress, .suppress])
    }

    @Test func oneFloodingUserDoesNotSilenceAnother() {
        var limiter = RefusalLogLimiter(burst: 2, window: .seconds(10))
        for _ in 0..<100 { _ = limiter.admit(uid: 1000, now: second) }
        #expect(limiter.admit(uid: 1001, now: second) == .log(suppressedBefore: 0))
        #expect(limiter.admit(uid: 0, now: second) == .log(suppressedBefore: 0))
    }

    @Test func theNextWindowReportsWhatWasSuppressed() {
        var limiter = RefusalLogLimiter(burst: 1, window: .seconds(10))
        _ = limiter.admit(uid: 1000, now: 0)
        for _ in 0..<7 { #expect(limiter.admit(uid: 1000, now: 5 * second) == .suppress) }
        #expect(limiter.admit(uid: 1000, now: 10 * second) == .log(suppressedBefore: 7))
        #expect(limiter.admit(uid: 1000, now: 11 * second) == .suppress)
    }

    @Test func expiryReportsAFloodThatStopped() {
        var limiter = RefusalLogLimiter(burst: 1, window: .seconds(10))
        _ = limiter.admit(uid: 1000, now: 0)
        _ = limiter.admit(uid: 1000, now: 1)
        _ = limiter.admit(uid: 1000, now: 2)
        _ = limiter.admit(uid: 1001, now: 0)
        #expect(limiter.expire(now: 9 * second).isEmpty)
        #expect(limiter.expire(now: 10 * second) == [RefusalLogLimiter.Suppressed(uid: 1000, count: 2)])
        #expect(limiter.isIdle)
        // A report is made once.
        #expect(limiter.admit(uid: 1000, now: 11 * second) == .log(suppressedBefore: 0))
    }

    @Test func theTableStaysBounded() {
        var limiter = RefusalLogLimiter(burst: 1, window: .seconds(10), maxTrackedUIDs: 4)
        for uid in UInt32(0)..<10 {
            _ = limiter.admit(uid: uid, now: UInt64(uid))
            _ = limiter.admit(uid: uid, now: UInt64(uid))
        }
        let reports = limiter.expire(now: 100)
        #expect(reports.map(\.uid) == [0, 1, 2, 3, 4, 5])
        #expect(reports.allSatisfy { $0.count == 1 })
        #expect(limiter.admit(uid: 9, now: 200) == .suppress)
    }
}
