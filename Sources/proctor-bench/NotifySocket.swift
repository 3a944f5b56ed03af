import LinuxIO
import Glibc

/// The datagram socket a service manager listens on for `sd_notify` messages: the bench
/// hands its path to proctord as `NOTIFY_SOCKET` and waits for `READY=1` on it.
final class NotifySocket {
    let path: String
    private let fd: CInt

    init(path: String) throws(BenchError) {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket(AF_UNIX, SOCK_DGRAM) failed: \(String(cString: strerror(errno)))") }
        unlink(path)
        guard let address = UnixSocketAddress(path: path) else { throw BenchError("not a socket path: \(path)") }
        guard address.withSocketAddress({ bind(fd, $0, $1) }) == 0 else {
            throw BenchError("cannot bind the notify socket \(path): \(String(cString: strerror(errno)))")
        }
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// Waits until a datagram with a `READY=1` line arrives; false after `timeoutSeconds`.
    func waitForReady(timeoutSeconds: Double) -> Bool {
        let deadline = MonotonicClock.nanoseconds() + UInt64(timeoutSeconds * 1e9)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let now = MonotonicClock.nanoseconds()
            guard now < deadline else { return false }
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, CInt(max(1, (deadline - now) / 1_000_000))) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { continue }
            if String(decoding: buffer[0..<count], as: UTF8.self).split(separator: "\n").contains("READY=1") { return true }
        }
    }
}
