/// When to poll next: the interval with random jitter after a good fetch, so that a fleet
/// started together spreads out; exponential backoff with a cap after failures, also
/// jittered, so that a recovering MDM is not hit by every machine at once. Pure: the caller
/// gives the random numbers.
public struct PollSchedule: Sendable, Hashable {
    /// Seconds between polls while fetching works (`PollIntervalSec=`).
    public let interval: Int
    /// The delay before the first retry: 30 s, or the interval if that is shorter.
    public var firstRetry: Int { min(30, interval) }
    /// The longest delay between retries: an hour, or the interval if that is longer.
    public var maximumBackoff: Int { max(3600, interval) }
    /// The longest wait after a fetch that worked (the interval + 10 %), in whole seconds: how
    /// long a kept connection stays idle between two polls.
    public var longestDelayAfterSuccess: Int { (interval * 11 + 9) / 10 }
    /// Failures since the last fetch that worked.
    public private(set) var consecutiveFailures = 0

    public init(interval: Int) {
        precondition(interval > 0, "a poll interval is positive")
        self.interval = interval
    }

    /// Seconds until the next poll, after a fetch that worked (a bundle or a 304) or failed.
    /// `random` is uniform in 0..<1. Success: the interval ±10 %. The n-th failure in a row:
    /// `d = min(firstRetry·2^(n-1), maximumBackoff)`, then a delay in `d/2 ..< d` ("equal jitter").
    public mutating func delay(afterSuccess succeeded: Bool, random: Double) -> Double {
        let random = min(max(random, 0), 1)
        if succeeded {
            consecutiveFailures = 0
            return Double(interval) * (0.9 + 0.2 * random)
        }
        consecutiveFailures += 1
        let doublings = min(consecutiveFailures - 1, 30)
        let ceiling = Double(min(firstRetry << doublings, maximumBackoff))
        return ceiling / 2 + ceiling / 2 * random
    }
}
