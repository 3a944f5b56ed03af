import Foundation
import Glibc
import LinuxIO

/// A datagram socket standing in for systemd's `NOTIFY_SOCKET`: give `path` to a child as
/// `NOTIFY_SOCKET` and read the assignments (`READY=1`, `STOPPING=1`, …) it sends.
public final class NotifySocketListener: @unchecked Sendable {
    // @unchecked: the descriptor is fixed at init; receiving is meant for one test at a time.
    public let path: String
    private let descriptor: Int32
    private var received: [String] = []

    /// Binds a new `AF_UNIX` `SOCK_DGRAM` socket at `path` (which must not exist yet).
    public init(path: String) throws {
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw TestSupportError("socket: \(String(cString: strerror(errno)))") }
        guard let address = UnixSocketAddress(path: path) else {
            close(descriptor)
            throw TestSupportError("not a socket path (empty, with a NUL, or over \(UnixSocketAddress.maximumPathLength) bytes): \(path)")
        }
        let bound = address.withSocketAddress { bind(descriptor, $0, $1) }
        guard bound == 0 else {
            let message = String(cString: strerror(errno))
            close(descriptor)
            throw TestSupportError("bind \(path): \(message)")
        }
        self.path = path
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
        unlink(path)
    }

    /// Every assignment received so far, one per line of each datagram, in arrival order.
    public var assignments: [String] {
        drain(waitingUpTo: 0)
        return received
    }

    /// Waits until `assignment` (e.g. `READY=1`) has been received; returns everything so far.
    @discardableResult
    public func waitFor(_ assignment: String, timeout: Duration = .seconds(10)) throws -> [String] {
        let deadline = ContinuousClock.now + timeout
        while !received.contains(assignment) {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else {
                throw TestSupportError("timed out waiting for \(assignment) on \(path); received \(received)")
            }
            let milliseconds = Int32(remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000)
            drain(waitingUpTo: max(milliseconds, 1))
        }
        return received
    }

    /// Waits up to `milliseconds` for a datagram, then reads every one that is queued.
    private func drain(waitingUpTo milliseconds: Int32) {
        var event = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&event, 1, milliseconds) > 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            guard count > 0 else { return }
            let text = String(decoding: buffer[..<count], as: UTF8.self)
            received += text.split(separator: "\n").map(String.init)
        }
    }
}
