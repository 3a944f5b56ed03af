import CLinux
public import Foundation
import Glibc
import LinuxIO

/// A datagram socket standing in for systemd's `NOTIFY_SOCKET`: give `path` to a child as
/// `NOTIFY_SOCKET` and read the assignments (`READY=1`, `STOPPING=1`, …) it sends, and which
/// process sent each (the kernel's `SCM_CREDENTIALS`, as systemd reads them for `NotifyAccess=`).
public final class NotifySocketListener: @unchecked Sendable {
    // @unchecked: the descriptor is fixed at init; receiving is meant for one test at a time.
    public let path: String
    private let descriptor: Int32
    private var received: [(assignment: String, sender: pid_t?)] = []

    /// Binds a new `AF_UNIX` `SOCK_DGRAM` socket at `path` (which must not exist yet).
    public init(path: String) throws {
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else { throw TestSupportError("socket: \(String(cString: strerror(errno)))") }
        guard clinux_set_socket_option(descriptor, CLINUX_SO_PASSCRED, 1) == 0 else {
            let message = String(cString: strerror(errno))
            close(descriptor)
            throw TestSupportError("SO_PASSCRED: \(message)")
        }
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
        return received.map(\.assignment)
    }

    /// The process that sent the first datagram carrying `assignment` (in this process's pid
    /// namespace), or nil if none has come: a child that did not `exec` its daemon (a wrapper
    /// script) has its own pid, not the daemon's.
    public func sender(of assignment: String) -> pid_t? {
        drain(waitingUpTo: 0)
        return received.first { $0.assignment == assignment }?.sender
    }

    /// Waits until `assignment` (e.g. `READY=1`) has been received; returns everything so far.
    @discardableResult
    public func waitFor(_ assignment: String, timeout: Duration = .seconds(10)) throws -> [String] {
        let deadline = ContinuousClock.now + timeout
        while !received.contains(where: { $0.assignment == assignment }) {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else {
                throw TestSupportError("timed out waiting for \(assignment) on \(path); received \(received.map(\.assignment))")
            }
            let milliseconds = Int32(remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000)
            drain(waitingUpTo: max(milliseconds, 1))
        }
        return received.map(\.assignment)
    }

    /// Waits up to `milliseconds` for a datagram, then reads every one that is queued.
    private func drain(waitingUpTo milliseconds: Int32) {
        var event = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&event, 1, milliseconds) > 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            var sender = clinux_sender()
            let count = buffer.withUnsafeMutableBytes { clinux_receive_with_sender(descriptor, $0.baseAddress, $0.count, &sender) }
            guard count > 0 else { return }  // EAGAIN: nothing more queued
            if sender.pidfd >= 0 { close(sender.pidfd) }
            let text = String(decoding: buffer[..<count], as: UTF8.self)
            received += text.split(separator: "\n").map { (String($0), sender.has_credentials == 1 ? sender.pid : nil) }
        }
    }
}
