import Glibc
import ProctorProtocol

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

    /// Seconds since the epoch of an RFC 3339 time, or nil.
    static func parse(_ text: String) -> Int? {
        RFC3339.milliseconds(text).map { Int($0 / 1000) - ($0 % 1000 < 0 ? 1 : 0) }
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
