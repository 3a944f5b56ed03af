import Glibc

/// Renders the daemon's RFC 3339 UTC times in the local time zone (the `TZ` of the
/// process), ISO 8601 with the offset: `2026-11-29T14:03:05+01:00`.
enum LocalTime {
    /// `text` in local time; `text` itself when it is not an RFC 3339 time.
    static func format(_ text: String) -> String {
        guard let seconds = parse(text) else { return text }
        var time = time_t(seconds)
        var parts = tm()
        guard localtime_r(&time, &parts) != nil else { return text }
        var buffer = [CChar](repeating: 0, count: 64)
        let length = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
        guard length > 0 else { return text }
        var formatted = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // strftime's %z is +0100; ISO 8601's extended form is +01:00.
        formatted.insert(":", at: formatted.index(formatted.endIndex, offsetBy: -2))
        return formatted
    }

    /// Seconds since the epoch of `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`, or nil.
    static func parse(_ text: String) -> Int? {
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
        if byte(index, is: ".") {
            index += 1
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
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
        return Int(timegm(&parts)) - offset
    }

    /// `3d 4h`, `2h 5m`, `5m 3s`, `42s`: an uptime at a glance.
    static func duration(_ seconds: Double) -> String {
        let total = max(0, Int(seconds))
        let (days, hours, minutes, rest) = (total / 86_400, total / 3600 % 24, total / 60 % 60, total % 60)
        if days > 0 { return "\(days)d \(hours)h" }
        if hours > 0 { return "\(hours)h \(minutes)m" }
        if minutes > 0 { return "\(minutes)m \(rest)s" }
        return "\(rest)s"
    }
}
