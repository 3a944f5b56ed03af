/// Capped exponential backoff between attempts to reach proctord: 100 ms, doubling, at most
/// 5 s, back to the start after a success. A waiting thread sleeps; it never spins.
struct ReconnectBackoff: Equatable {
    static let initial: Duration = .milliseconds(100)
    static let cap: Duration = .seconds(5)

    private(set) var nextDelay: Duration = initial

    /// The delay before the next attempt; each call doubles the one after, up to the cap.
    mutating func next() -> Duration {
        let delay = nextDelay
        nextDelay = min(nextDelay * 2, Self.cap)
        return delay
    }

    mutating func reset() { nextDelay = Self.initial }
}
