import Glibc
public import LinuxIO

/// Sockets handed over by systemd socket activation, read from `LISTEN_PID`, `LISTEN_FDS` and
/// `LISTEN_FDNAMES` as `sd_listen_fds_with_names(3)` reads them (no libsystemd), grouped by
/// the socket unit's `FileDescriptorName=`.
public enum ListenedSockets {
    /// Why the handed-over sockets could not be taken.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// The `LISTEN_*` environment is malformed (`LISTEN_PID` or `LISTEN_FDS` not a positive
        /// number, as many names as descriptors not given): `EINVAL`, as libsystemd says.
        case invalidEnvironment(Errno)
        /// `fcntl(2)` could not set `FD_CLOEXEC` on a handed-over descriptor.
        case cannotSetCloseOnExec(descriptor: CInt, Errno)

        public var description: String {
            switch self {
            case .invalidEnvironment(let errno):
                "socket activation environment (LISTEN_PID/LISTEN_FDS/LISTEN_FDNAMES) is invalid: \(errno)"
            case .cannotSetCloseOnExec(let descriptor, let errno):
                "cannot set close-on-exec on activated descriptor \(descriptor): \(errno)"
            }
        }
    }

    /// The first descriptor systemd passes (`SD_LISTEN_FDS_START`).
    static let firstDescriptor: CInt = 3
    static let variables = ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"]

    /// Takes the descriptors systemd passed to this process, keyed by `FileDescriptorName=`
    /// (a socket unit without one is named after the unit, e.g. `proctord.socket`; without
    /// `LISTEN_FDNAMES` every descriptor is `unknown`). Empty when the process was not
    /// socket-activated or `LISTEN_PID` names another process. Every descriptor returned has
    /// `FD_CLOEXEC` set, and the `LISTEN_*` variables are removed from the environment in every
    /// case, so children never see them. The caller owns the descriptors.
    public static func receive() throws(Failure) -> [String: [CInt]] {
        try receive(from: firstDescriptor)
    }

    /// `receive()` with the descriptors counted from `first` (tests cannot give up 3 and 4).
    static func receive(from first: CInt) throws(Failure) -> [String: [CInt]] {
        let values = variables.map(ServiceManagerEnvironment.value)
        for name in variables { unsetenv(name) }
        let names = try descriptorNames(listenPID: values[0], count: values[1], names: values[2], ownProcessID: getpid())
        var sockets: [String: [CInt]] = [:]
        for (offset, name) in names.enumerated() {
            let descriptor = first + CInt(offset)
            try setCloseOnExec(descriptor)
            sockets[name, default: []].append(descriptor)
        }
        return sockets
    }

    /// The name of each passed descriptor, in descriptor order; empty when there are none for
    /// this process. `names` is split on `:` (empty names kept) and must name every descriptor.
    static func descriptorNames(listenPID: String?, count: String?, names: String?,
                                ownProcessID: pid_t) throws(Failure) -> [String] {
        guard let listenPID else { return [] }
        guard let target = ServiceManagerEnvironment.processID(listenPID) else { throw .invalidEnvironment(.invalidArgument) }
        guard target == ownProcessID, let count else { return [] }
        guard let descriptors = ServiceManagerEnvironment.decimal(count), descriptors > 0,
              descriptors <= UInt64(CInt.max - firstDescriptor) else { throw .invalidEnvironment(.invalidArgument) }
        guard let names else { return Array(repeating: "unknown", count: Int(descriptors)) }
        let split = names.isEmpty ? [] : names.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard split.count == descriptors else { throw .invalidEnvironment(.invalidArgument) }
        return split
    }

    private static func setCloseOnExec(_ descriptor: CInt) throws(Failure) {
        let flags = fcntl(descriptor, F_GETFD)
        guard flags >= 0, fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) == 0 else {
            throw .cannotSetCloseOnExec(descriptor: descriptor, .current)
        }
    }
}
