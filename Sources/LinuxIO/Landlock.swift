import CLandlock
import Glibc

/// Landlock (landlock(7)): a process restricts its own file-system access, in layers the kernel
/// enforces and that can only tighten. Proctor uses it to confine where an app may *write*:
/// reading and executing are left alone (not "handled"), so the app runs as before.
///
/// A restriction applies to the calling thread and the processes and threads it creates later;
/// with the kernel's ABI up to 7 other threads that already run are not restricted, so restrict
/// before starting threads.
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

        /// Allows `access` (a subset of the handled rights) anywhere beneath `directory`.
        public func allow(_ access: FileSystemAccess, beneath directory: String) throws(LandlockError) {
            precondition(handledAccess.isSuperset(of: access), "allowing rights the ruleset does not handle")
            let parent: FileDescriptor
            do { parent = try FileDescriptor.open(directory, clandlock_o_path | O_DIRECTORY) }
            catch { throw .failed(operation: "open", path: directory, errno: error) }
            defer { try? parent.close() }
            guard clandlock_add_path_rule(descriptor.rawValue, access.rawValue, parent.rawValue) == 0 else {
                throw .failed(operation: "add a rule for", path: directory, errno: .current)
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
    }

    /// Confines the calling thread (and its future children) so that it may change the file
    /// system only beneath `directories`: everything the kernel's ABI can deny, writes, creation,
    /// removal, renames, truncation, is refused elsewhere with `EACCES` (`EXDEV` for some renames).
    /// Returns the ABI used. Another call adds a layer: it can only tighten.
    @discardableResult
    public static func restrictModifications(toBeneath directories: [String]) throws(LandlockError) -> Int {
        let abi = try abiVersion()
        let access = FileSystemAccess.modifying(abi: abi)
        let ruleset = try Ruleset(handling: access)
        for directory in directories { try ruleset.allow(access, beneath: directory) }
        try ruleset.restrictCallingThread()
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
