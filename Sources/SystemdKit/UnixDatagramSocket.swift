import CLinux
import Glibc
import LinuxIO

extension UnixSocketAddress {
    /// An address as systemd writes it into `NOTIFY_SOCKET` (and journald's socket path): an
    /// absolute path, or `@name` for `name` in the abstract namespace. Fails with
    /// `EAFNOSUPPORT` when `text` is neither, `EINVAL` when it does not fit a `sockaddr_un`
    /// (as `sd_notify(3)` does).
    init(systemdSocket text: String) throws(Errno) {
        let address: UnixSocketAddress? = switch text.utf8.first {
        case UInt8(ascii: "@"): UnixSocketAddress(abstractName: String(decoding: text.utf8.dropFirst(), as: UTF8.self))
        case UInt8(ascii: "/"): UnixSocketAddress(path: text)
        default: throw Errno(rawValue: EAFNOSUPPORT)
        }
        // "/" alone is refused as sd_notify refuses it.
        guard let address, text.utf8.count >= 2 else { throw .invalidArgument }
        self = address
    }
}

/// An unbound, blocking, close-on-exec AF_UNIX datagram socket that sends to addresses, as
/// libsystemd's `sd_notify` and `sd_journal_sendv` use: its send buffer is raised to 8 MiB
/// (beyond `net.core.wmem_max` where the process may), so that one datagram holds a large record.
final class UnixDatagramSocket: Sendable {
    /// libsystemd's `SNDBUF_SIZE`; the kernel doubles it, and a datagram may use all but 32 bytes.
    static let sendBufferSize: CInt = 8 * 1024 * 1024

    let descriptor: CInt

    init() throws(Errno) {
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .current }
        // Best effort, as libsystemd: SO_SNDBUFFORCE needs CAP_NET_ADMIN, SO_SNDBUF stops at wmem_max.
        var size = Self.sendBufferSize
        let length = socklen_t(MemoryLayout<CInt>.size)
        if setsockopt(descriptor, SOL_SOCKET, CLINUX_SO_SNDBUFFORCE, &size, length) != 0 {
            _ = setsockopt(descriptor, SOL_SOCKET, SO_SNDBUF, &size, length)
        }
    }

    deinit { close(descriptor) }

    /// Sends `bytes` as one datagram (never raising SIGPIPE). `EMSGSIZE` when it is larger
    /// than the send buffer allows.
    func send(_ bytes: [UInt8], to address: UnixSocketAddress) throws(Errno) {
        let sent = bytes.withUnsafeBytes { buffer in
            address.withSocketAddress { sendto(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL), $0, $1) }
        }
        guard sent >= 0 else { throw .current }
    }

    /// Sends a datagram of no bytes carrying a copy of `passed` (`SCM_RIGHTS`).
    func send(descriptor passed: FileDescriptor, to address: UnixSocketAddress) throws(Errno) {
        let sent = address.withSocketAddress { clinux_send_descriptor(descriptor, $0, $1, passed.rawValue) }
        guard sent >= 0 else { throw .current }
    }
}
