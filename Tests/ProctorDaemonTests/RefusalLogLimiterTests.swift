@testable import ProctorDaemon
import Testing

@Suite struct RefusalLogLimiterTests {
    private let second: UInt64 = 1_000_000_000

    @Test func logsTheFirstRefusalPerUIDPerWindowAndCountsTheRest() {
        var limiter = RefusalLogLimiter(window: .seconds(10))
        #expect(limiter.refused(uid: 1000, now: 0) == .log(suppressedBefore: 0))
        for tick in 1 ... 500 { #expect(limiter.refused(uid: 1000, now: UInt64(tick) * 1_000_000) == .suppress) }
        // Another user is not silenced by the first one's flood.
        #expect(limiter.refused(uid: 1001, now: second) == .log(suppressedBefore: 0))
        #expect(limiter.refused(uid: 1000, now: 11 * second) == .log(suppressedBefore: 500))
        #expect(limiter.refused(uid: 1000, now: 22 * second) == .log(suppressedBefore: 0))
    }

    @Test func remembersABoundedNumberOfUIDs() {
        var limiter = RefusalLogLimiter(window: .seconds(10), maxTrackedUIDs: 4)
        for uid in UInt32(0) ..< 100 { #expect(limiter.refused(uid: uid, now: 0) == .log(suppressedBefore: 0)) }
        #expect(limiter.refused(uid: 99, now: 1) == .suppress)
    }
}
