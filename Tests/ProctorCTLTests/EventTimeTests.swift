@testable import ProctorCTL
import Glibc
import Testing

/// `events --since/--until` times, read in the test process's time zone (set to UTC+1 here).
@Suite(.serialized) struct EventTimeTests {
    /// 2026-11-29T14:30:15.250Z
    static let now: Int64 = 1_795_962_615_250

    init() {
        setenv("TZ", "XYZ-1", 1)
        tzset()
    }

    @Test(arguments: [
        ("2026-11-29T12:00:00Z", 1_795_953_600_000),
        ("2026-11-29T13:00:00+01:00", 1_795_953_600_000),
        ("2026-11-29 13:00", 1_795_953_600_000),
        ("2026-11-29T13:00:00", 1_795_953_600_000),
        ("2026-11-29 13:00:30", 1_795_953_630_000),
        ("2026-11-29", 1_795_906_800_000),
        ("today", 1_795_906_800_000),
        ("yesterday", 1_795_820_400_000),
        ("tomorrow", 1_795_993_200_000),
        ("now", now),
        ("-1h", now - 3_600_000),
        ("-30m", now - 1_800_000),
        ("-1d12h", now - 129_600_000),
        ("+5m", now + 300_000),
        ("2h ago", now - 7_200_000),
        (" -10s ", now - 10_000),
    ] as [(String, Int64)])
    func readsTimes(_ text: String, _ expected: Int64) {
        #expect(EventTime.parse(text, now: Self.now) == expected)
    }

    @Test(arguments: ["", "-", "-h", "-1", "-1w", "1h", "2026-02-30", "2026-11-29 25:00", "2026-11-29 13:00:3",
                      "last tuesday", "2026-11-29T13:00:00+0100"])
    func refusesWhatIsNotATime(_ text: String) {
        #expect(EventTime.parse(text, now: Self.now) == nil)
    }
}
