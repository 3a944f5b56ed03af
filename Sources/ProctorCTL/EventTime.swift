import Glibc
import ProctorProtocol

/// The times `proctorctl events --since/--until` take, as journalctl does: an RFC 3339 time
/// (`2026-11-29T14:00:00Z`, any offset), a local time `YYYY-MM-DD [HH:MM[:SS]]` (`T` or a
/// space between), `now`, `today`, `yesterday`, `tomorrow` (local midnight), or a time
/// relative to now: `-1h`, `-30m`, `-1d12h`, `+5m` (units s, m, h, d; `ago` may follow a
/// number without a sign: `2h ago`).
enum EventTime {
    /// Milliseconds since the epoch of `text` read at `now` in the local time zone, or nil.
    static func parse(_ text: String, now: Int64) -> Int64? {
        let trimmed = text.trimmingSpaces
        if let absolute = RFC3339.milliseconds(trimmed) { return absolute }
        switch trimmed {
        case "now": return now
        case "today": return localMidnight(of: now, addingDays: 0)
        case "yesterday": return localMidnight(of: now, addingDays: -1)
        case "tomorrow": return localMidnight(of: now, addingDays: 1)
        default: break
        }
        if let local = localTime(trimmed) { return local }
        if trimmed.hasSuffix(" ago"), let span = span(String(trimmed.dropLast(4)).trimmingSpaces) { return now - span }
        guard let sign = trimmed.first, sign == "-" || sign == "+", let span = span(String(trimmed.dropFirst())) else { return nil }
        return sign == "-" ? now - span : now + span
    }

    /// `1d12h`, `30m`, `90s` in milliseconds: at least one number, each followed by a unit.
    private static func span(_ text: String) -> Int64? {
        let units: [Character: Int64] = ["s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000]
        var total: Int64 = 0
        var digits = ""
        for character in text {
            if character.isASCII, character.isNumber {
                digits.append(character)
            } else if let unit = units[character], let number = Int64(digits), number <= 1_000_000_000 {
                total += number * unit
                digits = ""
            } else {
                return nil
            }
        }
        return digits.isEmpty && !text.isEmpty ? total : nil
    }

    /// `YYYY-MM-DD`, `YYYY-MM-DD HH:MM`, `YYYY-MM-DD HH:MM:SS` (or with `T`), local time.
    private static func localTime(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        func number(_ start: Int, _ count: Int) -> Int32? {
            guard start + count <= bytes.count else { return nil }
            var value: Int32 = 0
            for byte in bytes[start..<start + count] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int32(byte - 0x30)
            }
            return value
        }
        func byte(_ index: Int, is character: Character) -> Bool { index < bytes.count && bytes[index] == character.asciiValue }
        guard let year = number(0, 4), byte(4, is: "-"), let month = number(5, 2), byte(7, is: "-"), let day = number(8, 2),
              (1...12).contains(month), (1...31).contains(day) else { return nil }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = month - 1
        parts.tm_mday = day
        parts.tm_isdst = -1
        if bytes.count > 10 {
            guard byte(10, is: " ") || byte(10, is: "T"), let hour = number(11, 2), byte(13, is: ":"), let minute = number(14, 2),
                  hour < 24, minute < 60 else { return nil }
            parts.tm_hour = hour
            parts.tm_min = minute
            if bytes.count > 16 {
                guard bytes.count == 19, byte(16, is: ":"), let second = number(17, 2), second < 61 else { return nil }
                parts.tm_sec = second
            }
        }
        let seconds = mktime(&parts)
        // mktime normalises 2026-02-31 into March: refuse a day the month does not have.
        guard seconds != -1, parts.tm_mday == day else { return nil }
        return Int64(seconds) * 1000
    }

    private static func localMidnight(of milliseconds: Int64, addingDays days: Int32) -> Int64 {
        var time = time_t(milliseconds / 1000)
        var parts = tm()
        localtime_r(&time, &parts)
        parts.tm_hour = 0
        parts.tm_min = 0
        parts.tm_sec = 0
        parts.tm_mday += days
        parts.tm_isdst = -1
        return Int64(mktime(&parts)) * 1000
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
