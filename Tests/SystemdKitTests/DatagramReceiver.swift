import Glibc
import LinuxIO

/// A bound AF_UNIX datagram socket standing in for systemd's notification socket or
/// journald's: SystemdKit really sends to it, and the test reads what arrived, including a
/// descriptor passed with SCM_RIGHTS.
final class DatagramReceiver {
    let descriptor: CInt
    /// The address as SystemdKit is given it: a path, or `@name` for the abstract namespace.
    let address: String

    /// One datagram: its bytes and the descriptor it carried, if any (the caller closes it).
    struct Datagram {
        var bytes: [UInt8]
        var passedDescriptor: CInt?
        var lines: [String] { String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init) }
    }

    init(abstract: Bool = false) throws {
        let name = "proctor-systemdkit-test-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        address = abstract ? "@" + name : "/tmp/" + name + ".socket"
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Pipe.Failure(errno: errno) }
        let socketAddress = abstract ? UnixSocketAddress(abstractName: name) : UnixSocketAddress(path: address)
        let bound = socketAddress.map { $0.withSocketAddress { bind(descriptor, $0, $1) } } ?? -1
        guard bound == 0 else { throw Pipe.Failure(errno: errno) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// The next datagram (up to `capacity` bytes); nil when none came within 5 s.
    func receive(capacity: Int = 65536) -> Datagram? {
        var buffer = [UInt8](repeating: 0, count: capacity)
        // Room for one cmsghdr and one descriptor, aligned as cmsghdr (size_t) is.
        var control = [UInt64](repeating: 0, count: 4)
        let count = buffer.withUnsafeMutableBytes { bytes in
            control.withUnsafeMutableBytes { controlBytes in
                var vector = iovec(iov_base: bytes.baseAddress, iov_len: bytes.count)
                return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                    var message = msghdr()
                    message.msg_iov = vectorPointer
                    message.msg_iovlen = 1
                    message.msg_control = controlBytes.baseAddress
                    message.msg_controllen = controlBytes.count
                    let count = recvmsg(descriptor, &message, Int32(MSG_CMSG_CLOEXEC))
                    if count >= 0, message.msg_controllen == 0 { controlBytes.storeBytes(of: 0, as: Int.self) }
                    return count
                }
            }
        }
        guard count >= 0 else { return nil }
        var datagram = Datagram(bytes: Array(buffer[0 ..< count]), passedDescriptor: nil)
        // struct cmsghdr { size_t cmsg_len; int cmsg_level; int cmsg_type; } then the data.
        control.withUnsafeBytes { header in
            let length = header.load(as: Int.self)
            let level = header.load(fromByteOffset: 8, as: CInt.self)
            let type = header.load(fromByteOffset: 12, as: CInt.self)
            if length == 16 + MemoryLayout<CInt>.size, level == SOL_SOCKET, type == 1 /* SCM_RIGHTS */ {
                datagram.passedDescriptor = header.load(fromByteOffset: 16, as: CInt.self)
            }
        }
        return datagram
    }

    deinit {
        close(descriptor)
        if address.hasPrefix("/") { unlink(address) }
    }
}
