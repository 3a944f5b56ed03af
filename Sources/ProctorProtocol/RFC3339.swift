import Glibc

/// The interfaces' time format: RFC 3339, written in UTC with milliseconds
/// (`2026-11-29T12:00:00.123Z`), read with any offset and any fraction.
public enum RFC3339 {
    /// `milliseconds` since the Unix epoch as `2026-11-29T12:00:00.123Z`.
    public static func string(milliseconds: Int64) -> String {
        var seconds = time_t(milliseconds.floorDivided(by: 1000))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))."
            + "\(pad(Int32(milliseconds - milliseconds.floorDivided(by: 1000) * 1000), 3))Z"
    }

    /// Milliseconds since the epoch of `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` (`T` may be
    /// `t` or a space), or nil when `text` is not such a time. Digits of the fraction past
    /// milliseconds are dropped.
    public static func milliseconds(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        func number(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[start..<start + count] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        func byte(_ index: Int, is character: Character) -> Bool {
            index < bytes.count && bytes[index] == character.asciiValue
        }
        guard let year = number(0, 4), byte(4, is: "-"), let month = number(5, 2), byte(7, is: "-"),
              let day = number(8, 2), byte(10, is: "T") || byte(10, is: "t") || byte(10, is: " "),
              let hour = number(11, 2), byte(13, is: ":"), let minute = number(14, 2), byte(16, is: ":"),
              let second = number(17, 2), (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60,
              second < 61
        else { return nil }
        var index = 19
        var fraction = 0
        if byte(index, is: ".") {
            index += 1
            var digits = 0
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) {
                if digits < 3 { fraction = fraction * 10 + Int(bytes[index] - 0x30) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in min(digits, 3)..<3 { fraction *= 10 }
        }
        var offset = 0
        if byte(index, is: "Z") || byte(index, is: "z") {
            index += 1
        } else if byte(index, is: "+") || byte(index, is: "-"), let hours = number(index + 1, 2), byte(index + 3, is: ":"),
                  let minutes = number(index + 4, 2) {
            offset = (hours * 60 + minutes) * 60 * (byte(index, is: "-") ? -1 : 1)
            index += 6
        } else {
            return nil
        }
        guard index == bytes.count else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        return (Int64(timegm(&parts)) - Int64(offset)) * 1000 + Int64(fraction)
    }
}

extension Int64 {
    /// Division rounding towards minus infinity, so times before 1970 format correctly.
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
