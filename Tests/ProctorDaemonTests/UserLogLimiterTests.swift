@testable import ProctorDaemon
import Testing

@Suite struct UserLogLimiterTests {
    private let second: UInt64 = 1_000_000_000

    @Test func aBurstIsLoggedThenTheRestIsCounted() {
        var limiter = UserLogLimiter(burst: 3, totalBurst: 1_000, window: .seconds(10))
        let admissions = (0..<5).map { _ in limiter.admit(uid: 1000, now: 1 * second) }
        #expect(admissions == [.log(suppressedBefore: 0), .log(suppressedBefore: 0), .log(suppressedBefore: 0),
                               .suppress, .suppress])
    }

    @Test func oneFloodingUserDoesNotSilenceAnother() {
        var limiter = UserLogLimiter(burst: 2, totalBurst: 1_000, window: .seconds(10))
        for _ in 0..<100 { _ = limiter.admit(uid: 1000, now: second) }
        #expect(limiter.admit(uid: 1001, now: second) == .log(suppressedBefore: 0))
        #expect(limiter.admit(uid: 0, now: second) == .log(suppressedBefore: 0))
    }

    @Test func theNextWindowReportsWhatWasSuppressed() {
        var limiter = UserLogLimiter(burst: 1, totalBurst: 1_000, window: .seconds(10))
        _ = limiter.admit(uid: 1000, now: 0)
        for _ in 0..<7 { #expect(limiter.admit(uid: 1000, now: 5 * second) == .suppress) }
        #expect(limiter.admit(uid: 1000, now: 10 * second) == .log(suppressedBefore: 7))
        #expect(limiter.admit(uid: 1000, now: 11 * second) == .suppress)
    }

    @Test func expiryReportsAFloodThatStopped() {
        var limiter = UserLogLimiter(burst: 1, totalBurst: 1_000, window: .seconds(10))
        _ = limiter.admit(uid: 1000, now: 0)
        _ = limiter.admit(uid: 1000, now: 1)
        _ = limiter.admit(uid: 1000, now: 2)
        _ = limiter.admit(uid: 1001, now: 0)
        #expect(limiter.expire(now: 9 * second).isEmpty)
        #expect(limiter.expire(now: 10 * second) == [UserLogLimiter.Suppressed(uid: 1000, count: 2)])
        #expect(limiter.isIdle)
        // A report is made once.
        #expect(limiter.admit(uid: 1000, now: 11 * second) == .log(suppressedBefore: 0))
    }

    @Test func theTableStaysBounded() {
        var limiter = UserLogLimiter(burst: 1, totalBurst: 1_000, window: .seconds(10), maxTrackedUIDs: 4)
        for uid in UInt32(0)..<10 {
            _ = limiter.admit(uid: uid, now: UInt64(uid))
            _ = limiter.admit(uid: uid, now: UInt64(uid))
        }
        let reports = limiter.expire(now: 100)
        #expect(reports.map(\.uid) == [0, 1, 2, 3, 4, 5])
        #expect(reports.allSatisfy { $0.count == 1 })
        #expect(limiter.admit(uid: 9, now: 200) == .suppress)
    }

    @Test func manyUIDsTogetherStayWithinTheTotal() {
        // One user can be thousands of uids (a user namespace): each within its own burst.
        var limiter = UserLogLimiter(burst: 2, totalBurst: 5, window: .seconds(10))
        let admissions = (UInt32(0)..<8).map { limiter.admit(uid: 100_000 + $0, now: second) }
        #expect(admissions.filter { $0 == .log(suppressedBefore: 0) }.count == 5)
        #expect(admissions.suffix(3).allSatisfy { $0 == .suppress })
        // Each suppressed uid is reported, though none of its lines was logged.
        #expect(limiter.expire(now: 11 * second).map(\.uid) == [100_005, 100_006, 100_007])
        // The total's window ended too.
        #expect(limiter.admit(uid: 100_007, now: 12 * second) == .log(suppressedBefore: 0))
    }

    @Test func aWindowThatEndedUnreportedCarriesItsCountIntoASuppressedOne() {
        var limiter = UserLogLimiter(burst: 1, totalBurst: 1, window: .seconds(10))
        _ = limiter.admit(uid: 1000, now: 0)
        #expect(limiter.admit(uid: 1000, now: second) == .suppress)
        // uid 1001 spends the next window's total before uid 1000 comes back.
        #expect(limiter.admit(uid: 1001, now: 10 * second) == .log(suppressedBefore: 0))
        #expect(limiter.admit(uid: 1000, now: 10 * second) == .suppress)
        #expect(limiter.expire(now: 20 * second) == [UserLogLimiter.Suppressed(uid: 1000, count: 2)])
    }
}
