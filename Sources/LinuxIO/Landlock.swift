import CLandlock
import Glibc

/// Landlock (landlock(7)): a process restricts its own file-system access, in layers the kernel
/// enforces and that can only tighten. Proctor uses it to confine where an app may *write*:
/// reading and executing are left alone (not "handled"), so the app runs as before.
///
/// A restriction applies to the calling thread and the processes and threads it creates later;
/// with the kernel's ABI up to 7 other threads that already run are not restricted by the
/// system call itself, so `Scope.everyThread` has each of them restrict itself (see
/// `Ruleset.restrictEveryThread`).
public enum Landlock {
    /// File-system access rights (`LANDLOCK_ACCESS_FS_*`).
    public struct FileSystemAccess: OptionSet, Hashable, Sendable {
        public let rawValue: UInt64
        public init(rawValue: UInt64) { self.rawValue = rawValue }

        public static let execute = FileSystemAccess(rawValue: 1 << 0)
        /// Opening a file for writing.
        public static let writeFile = FileSystemAccess(rawValue: 1 << 1)
        public static let readFile = FileSystemAccess(rawValue: 1 << 2)
        public static let readDirectory = FileSystemAccess(rawValue: 1 << 3)
        public static let removeDirectory = FileSystemAccess(rawValue: 1 << 4)
        public static let removeFile = FileSystemAccess(rawValue: 1 << 5)
        public static let makeCharacterDevice = FileSystemAccess(rawValue: 1 << 6)
        public static let makeDirectory = FileSystemAccess(rawValue: 1 << 7)
        public static let makeRegularFile = FileSystemAccess(rawValue: 1 << 8)
        public static let makeSocket = FileSystemAccess(rawValue: 1 << 9)
        public static let makeFIFO = FileSystemAccess(rawValue: 1 << 10)
        public static let makeBlockDevice = FileSystemAccess(rawValue: 1 << 11)
        public static let makeSymbolicLink = FileSystemAccess(rawValue: 1 << 12)
        /// Linking or renaming a file into another directory (ABI 2).
        public static let refer = FileSystemAccess(rawValue: 1 << 13)
        /// Truncating a file (ABI 3).
        public static let truncate = FileSystemAccess(rawValue: 1 << 14)

        /// The rights that apply to a file (not a directory): a rule on a file may grant only these.
        public static let fileRights: FileSystemAccess = [.execute, .writeFile, .readFile, .truncate]

        /// Every right that changes the file system, as far as the kernel's `abi` knows them:
        /// what "may write here" means. Reading and executing are not in it.
        public static func modifying(abi: Int) -> FileSystemAccess {
            var access: FileSystemAccess = [.writeFile, .removeDirectory, .removeFile, .makeCharacterDevice,
                                            .makeDirectory, .makeRegularFile, .makeSocket, .makeFIFO,
                                            .makeBlockDevice, .makeSymbolicLink]
            if abi >= 2 { access.insert(.refer) }
            if abi >= 3 { access.insert(.truncate) }
            return access
        }
    }

    /// The Landlock ABI version the running kernel supports (1 for 5.13 … 7 for 6.15+); throws
    /// `LandlockError.unavailable` when the kernel lacks Landlock or has it disabled.
    public static func abiVersion() throws(LandlockError) -> Int {
        let version = clandlock_abi_version()
        guard version >= 1 else { throw .unavailable(.current) }
        return version
    }

    /// A set of rules being built; `restrictCallingThread()` enforces it as a new layer.
    public final class Ruleset {
        /// The rights this ruleset governs: everything in it is denied unless a rule allows it.
        public let handledAccess: FileSystemAccess
        private let descriptor: FileDescriptor

        /// A ruleset that governs `handledAccess`.
        public init(handling handledAccess: FileSystemAccess) throws(LandlockError) {
            self.handledAccess = handledAccess
            let fd = clandlock_create_ruleset(handledAccess.rawValue, MemoryLayout<clandlock_ruleset_attr>.size)
            guard fd >= 0 else {
                let error = Errno.current
                if [ENOSYS, EOPNOTSUPP].contains(error.rawValue) { throw .unavailable(error) }
                throw .failed(operation: "create a ruleset", path: nil, errno: error)
            }
            descriptor = FileDescriptor(rawValue: fd)
        }

        deinit { try? descriptor.close() }

        /// Allows `access` (a subset of the handled rights) anywhere beneath `directory` — or, when
        /// the path is a file (`/dev/null`), on that file, for the rights that apply to files.
        public func allow(_ access: FileSystemAccess, beneath directory: String) throws(LandlockError) {
            let parent: FileDescriptor
            do { parent = try FileDescriptor.open(directory, clandlock_o_path) }
            catch { throw .failed(operation: "open", path: directory, errno: error) }
            defer { try? parent.close() }
            try allow(access, on: parent, named: directory)
        }

        /// Allows `access` on what `place` is open on (`Landlock.openPlace` will do) — beneath it
        /// when it is a directory, else the rights that apply to a file on it — whatever its path
        /// names by now. A rule added by path would follow a link put in its place after the
        /// caller checked it: to a folder, everything beneath that. `name` is for errors.
        public func allow(_ access: FileSystemAccess, on place: FileDescriptor, named name: String? = nil) throws(LandlockError) {
            precondition(handledAccess.isSuperset(of: access), "allowing rights the ruleset does not handle")
            let name = name ?? "file descriptor \(place.rawValue)"
            var status = stat()
            guard fstat(place.rawValue, &status) == 0 else { throw .failed(operation: "stat", path: name, errno: .current) }
            let granted = status.st_mode & S_IFMT == S_IFDIR ? access : access.intersection(.fileRights)
            guard clandlock_add_path_rule(descriptor.rawValue, granted.rawValue, place.rawValue) == 0 else {
                throw .failed(operation: "add a rule for", path: name, errno: .current)
            }
        }

        /// Sets `no_new_privs` (required, and right anyway: no set-uid escape from the sandbox) and
        /// enforces the ruleset on the calling thread and its future children, on top of any
        /// layers already in force. Irreversible.
        public func restrictCallingThread() throws(LandlockError) {
            guard clandlock_set_no_new_privileges() == 0 else {
                throw .failed(operation: "set no_new_privs", path: nil, errno: .current)
            }
            guard clandlock_restrict_self(descriptor.rawValue) == 0 else {
                throw .failed(operation: "restrict the process", path: nil, errno: .current)
            }
        }

        /// Enforces the ruleset on the calling thread, then on every other thread of the process:
        /// each is sent `signal` (`Landlock.threadSignal`) and its handler restricts that thread,
        /// one at a time, until a pass over `/proc/self/task` finds no thread left — glibc's way
        /// of applying setuid(2) to every thread. A thread that blocks the signal cannot be
        /// reached: after `timeout` the call fails (`failed(operation: "restrict thread N", …,
        /// ETIMEDOUT)`) with the process partly restricted, which only ever tightens. A thread
        /// started by an unrestricted one during the call is found by the next pass. Call it from
        /// one thread at a time.
        public func restrictEveryThread(signal: CInt = Landlock.threadSignal,
                                        timeout: Duration = .seconds(2)) throws(LandlockError) {
            try restrictCallingThread()
            var unreached: pid_t = 0
            let milliseconds = CInt(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
            let result = clandlock_restrict_other_threads(descriptor.rawValue, signal, milliseconds, &unreached)
            guard result == 0 else {
                let operation = result == -ETIMEDOUT ? "restrict thread \(unreached)" : "restrict the other threads"
                throw .failed(operation: operation, path: nil, errno: Errno(rawValue: -result))
            }
        }
    }

    /// The signal `Ruleset.restrictEveryThread` uses by default: SIGPROF, one of the few that
    /// Dispatch's worker threads (and so Swift concurrency's) leave unblocked. Its handler stays
    /// installed and passes on to the previous handler every SIGPROF that is not its own.
    public static let threadSignal = SIGPROF

    /// Which threads a restriction covers.
    public enum Scope: Sendable {
        /// The calling thread and what it creates from now on: enough before any thread starts.
        case callingThread
        /// Every thread of the process (`Ruleset.restrictEveryThread`).
        case everyThread
    }

    /// A descriptor (`O_PATH`) on the directory `path` names, for `Ruleset.allow(_:on:named:)`;
    /// with `followingLinks` false, `ELOOP` (or `ENOTDIR`) when its last component is a link.
    public static func openDirectory(_ path: String, followingLinks: Bool) throws(Errno) -> FileDescriptor {
        try FileDescriptor.open(path, clandlock_o_path | O_DIRECTORY | (followingLinks ? 0 : O_NOFOLLOW))
    }

    /// Confines the threads of `scope` (and their future children) so that they may change the
    /// file system only beneath `directories` (or on the files among them) and on what the open
    /// `places` are open on (`Ruleset.allow(_:on:named:)`): everything the kernel's ABI can deny, writes, creation,
    /// removal, renames, truncation, is refused elsewhere with `EACCES` (`EXDEV` for some
    /// renames). Returns the ABI used. Another call adds a layer: it can only tighten.
    @discardableResult
    public static func restrictModifications(toBeneath directories: [String], places: [FileDescriptor] = [],
                                             scope: Scope = .callingThread) throws(LandlockError) -> Int {
        let abi = try abiVersion()
        let access = FileSystemAccess.modifying(abi: abi)
        let ruleset = try Ruleset(handling: access)
        for directory in directories { try ruleset.allow(access, beneath: directory) }
        for place in places { try ruleset.allow(access, on: place) }
        switch scope {
        case .callingThread: try ruleset.restrictCallingThread()
        case .everyThread: try ruleset.restrictEveryThread()
        }
        return abi
    }
}

/// Why a Landlock step failed.
public enum LandlockError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kernel has no Landlock, or it is disabled (not in the `lsm=` list): only advisory
    /// enforcement is possible.
    case unavailable(Errno)
    /// A step failed: which, on what path if any, and the errno.
    case failed(operation: String, path: String?, errno: Errno)

    public var description: String {
        switch self {
        case .unavailable(let errno):
            "Landlock is not available in this kernel: \(errno)"
        case .failed(let operation, let path?, let errno):
            "Landlock: \(operation) \(path): \(errno)"
        case .failed(let operation, nil, let errno):
            "Landlock: \(operation): \(errno)"
        }
    }
}
