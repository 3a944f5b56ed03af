import CSystemd
import Glibc
public import LinuxIO

/// Sockets handed over by systemd socket activation (`sd_listen_fds_with_names(3)`),
/// grouped by the socket unit's `FileDescriptorName=`.
public enum ListenedSockets {
    /// Why the handed-over sockets could not be taken.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// `sd_listen_fds_with_names` rejected the `LISTEN_*` environment (malformed `LISTEN_FDS`, …).
        case invalidEnvironment(Errno)
        /// systemd passed descriptors but no names for them.
        case missingNames(descriptorCount: Int32)
        /// `fcntl(2)` could not set `FD_CLOEXEC` on a handed-over descriptor.
        case cannotSetCloseOnExec(descriptor: CInt, Errno)

        public var description: String {
            switch self {
            case .invalidEnvironment(let errno):
                "socket activation environment (LISTEN_PID/LISTEN_FDS/LISTEN_FDNAMES) is invalid: \(errno)"
            case .missingNames(let count):
                "socket activation passed \(count) descriptors without names"
            case .cannotSetCloseOnExec(let descriptor, let errno):
                "cannot set close-on-exec on activated descriptor \(descriptor): \(errno)"
            }
        }
    }

    /// Takes the descriptors systemd passed to this process, keyed by `FileDescriptorName=`
    /// (a socket unit without one is named after the unit, e.g. `proctord.socket`). Empty when
    /// the process was not socket-activated. Every descriptor returned has `FD_CLOEXEC` set,
    /// and the `LISTEN_*` variables are removed from the environment so children never see them.
    /// The caller owns the descriptors.
    public static func receive() throws(Failure) -> [String: [CInt]] {
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        let count = sd_listen_fds_with_names(1, &names)
        if count < 0 { throw .invalidEnvironment(Errno(rawValue: -count)) }
        defer {
            if let names {
                for index in 0 ..< Int(count) { free(names[index]) }
                free(names)
            }
        }
        guard count > 0 else { return [:] }
        guard let names else { throw .missingNames(descriptorCount: count) }

        var sockets: [String: [CInt]] = [:]
        for index in 0 ..< count {
            let descriptor = SD_LISTEN_FDS_START + index
            try setCloseOnExec(descriptor)
            let name = names[Int(index)].map { String(cString: $0) } ?? "unknown"
            sockets[name, default: []].append(descriptor)
        }
        return sockets
    }

    private static func setCloseOnExec(_ descriptor: CInt) throws(Failure) {
        let flags = fcntl(descriptor, F_GETFD)
        guard flags >= 0, fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) == 0 else {
            throw .cannotSetCloseOnExec(descriptor: descriptor, .current)
        }
    }
}
