import CLinux
import Glibc
import LinuxIO

/// An AF_UNIX address as systemd writes it into `NOTIFY_SOCKET`: an absolute path, or `@name`
/// for `name` in the abstract namespace (`unix(7)`).
struct UnixDatagramAddress: Sendable {
    private var address = sockaddr_un()
    /// The address's length for `sendto(2)`: a path with its terminating NUL, an abstract
    /// name without one (every byte of it counts).
    private(set) var length: socklen_t = 0

    /// Fails with `EAFNOSUPPORT` when `text` is neither, `EINVAL` when it does not fit a
    /// `sockaddr_un` (as `sd_notify(3)` does).
    init(_ text: String) throws(Errno) {
        let bytes = Array(text.utf8)
        let isAbstract = bytes.first == UInt8(ascii: "@")
        guard isAbstract || bytes.first == UInt8(ascii: "/") else { throw Errno(rawValue: EAFNOSUPPORT) }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count >= 2, !bytes.contains(0), bytes.count <= (isAbstract ? capacity : capacity - 1) else {
            throw .invalidArgument
        }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            path.copyBytes(from: bytes)
            if isAbstract { path[0] = 0 }
        }
        length = socklen_t(MemoryLayout.offset(of: \sockaddr_un.sun_path)! + bytes.count + (isAbstract ? 0 : 1))
    }

    func withSocketAddress<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        withUnsafePointer(to: address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) } }
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
    func send(_ bytes: [UInt8], to address: UnixDatagramAddress) throws(Errno) {
        let sent = bytes.withUnsafeBytes { buffer in
            address.withSocketAddress { sendto(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL), $0, $1) }
        }
        guard sent >= 0 else { throw .current }
    }

    /// Sends a datagram of no bytes carrying a copy of `passed` (`SCM_RIGHTS`).
    func send(descriptor passed: FileDescriptor, to address: UnixDatagramAddress) throws(Errno) {
        let sent = address.withSocketAddress { clinux_send_descriptor(descriptor, $0, $1, passed.rawValue) }
        guard sent >= 0 else { throw .current }
    }
}
