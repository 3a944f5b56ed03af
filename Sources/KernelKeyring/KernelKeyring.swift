import CKeyutils
import Glibc
public import LinuxIO

/// A key in the kernel's key retention service (keyrings(7)), by serial number.
public struct KernelKey: Hashable, Sendable, CustomStringConvertible {
    /// The kernel's serial number for the key.
    public let serial: Int32

    public var description: String { "key \(serial)" }
}

/// Why a keyring operation failed: which operation, on which key, and the errno.
public struct KernelKeyringError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The operation: `"add"`, `"read"`, `"set the expiry of"`, `"revoke"`, ….
    public let operation: String
    /// The key's description (its name), or its serial number.
    public let key: String
    /// What the kernel reported (`ENOKEY`, `EKEYEXPIRED`, `EKEYREVOKED`, `EDQUOT`, …).
    public let errno: Errno

    public var description: String { "\(operation) kernel key \(key): \(errno)" }

    /// Whether the key is gone: never added, expired, revoked or invalidated.
    public var keyIsGone: Bool { [ENOKEY, EKEYEXPIRED, EKEYREVOKED].contains(errno.rawValue) }
}

/// Secrets kept by the kernel rather than in a file: a `user` key holds a payload that only
/// processes possessing the keyring (or the owning user, per the key's permissions) can read, that
/// never reaches the disk or swap through us, and that the kernel destroys at its expiry.
///
/// Keys are added with mode "possessor: all, user: view": the payload is readable only through a
/// keyring the process possesses (its session, or the user keyring of its uid).
public enum KernelKeyring {
    /// A keyring a process can reach by a special id.
    public enum Ring: Sendable {
        /// The calling process's session keyring (shared by the processes of a login session).
        case session
        /// The keyring of the calling process's real user id (shared by all the user's processes).
        case user

        var specialID: key_serial_t {
            switch self {
            case .session: KEY_SPEC_SESSION_KEYRING
            case .user: KEY_SPEC_USER_KEYRING
            }
        }
    }

    private static let keyType = "user"
    /// Possessor: view, read, write, search, link, setattr; owner user: view (KEY_POS_ALL | KEY_USR_VIEW).
    private static let permissions: key_perm_t = 0x3f00_0000 | 0x0001_0000

    /// Adds (or updates) the `user` key `name` in `ring` with `payload`, expiring after
    /// `expiresAfterSeconds` when given (the kernel then refuses to read it and removes it).
    @discardableResult
    public static func add(_ name: String, payload: UnsafeRawBufferPointer, to ring: Ring,
                           expiresAfterSeconds: UInt32?) throws(KernelKeyringError) -> KernelKey {
        let serial = add_key(keyType, name, payload.baseAddress, payload.count, ring.specialID)
        guard serial >= 0 else { throw KernelKeyringError(operation: "add", key: name, errno: .current) }
        let key = KernelKey(serial: serial)
        do throws(Errno) {
            guard keyctl_setperm(serial, permissions) == 0 else { throw Errno.current }
            if let seconds = expiresAfterSeconds {
                guard keyctl_set_timeout(serial, seconds) == 0 else { throw Errno.current }
            }
        } catch {
            // A key whose permissions or expiry could not be set must not linger.
            keyctl_revoke(serial)
            throw KernelKeyringError(operation: "restrict", key: name, errno: error)
        }
        return key
    }

    /// The `user` key `name` reachable from `ring`; nil when there is none or it has expired or
    /// been revoked.
    public static func find(_ name: String, in ring: Ring) throws(KernelKeyringError) -> KernelKey? {
        let serial = keyctl_search(ring.specialID, keyType, name, 0)
        if serial >= 0 { return KernelKey(serial: Int32(serial)) }
        let error = KernelKeyringError(operation: "search for", key: name, errno: .current)
        if error.keyIsGone { return nil }
        throw error
    }

    /// Calls `body` with the key's payload; the kernel's copy of it is zeroed and freed afterwards.
    public static func withPayload<Result>(of key: KernelKey, _ body: (UnsafeRawBufferPointer) -> Result) throws(KernelKeyringError) -> Result {
        var buffer: UnsafeMutableRawPointer? = nil
        let length = keyctl_read_alloc(key.serial, &buffer)
        guard length >= 0, let buffer else { throw KernelKeyringError(operation: "read", key: key.description, errno: .current) }
        defer {
            explicit_bzero(buffer, Int(length))
            free(buffer)
        }
        return body(UnsafeRawBufferPointer(start: buffer, count: Int(length)))
    }

    /// Sets the key to expire `seconds` from now (0: never).
    public static func setExpiry(of key: KernelKey, seconds: UInt32) throws(KernelKeyringError) {
        guard keyctl_set_timeout(key.serial, seconds) == 0 else {
            throw KernelKeyringError(operation: "set the expiry of", key: key.description, errno: .current)
        }
    }

    /// Revokes the key: from now on every operation on it fails with `EKEYREVOKED`, and the kernel
    /// destroys its payload.
    public static func revoke(_ key: KernelKey) throws(KernelKeyringError) {
        guard keyctl_revoke(key.serial) == 0 else {
            throw KernelKeyringError(operation: "revoke", key: key.description, errno: .current)
        }
    }

    /// Gives the calling process a new anonymous session keyring (dropping its old one), so its
    /// keys are shared with nothing else; returns the new keyring.
    public static func joinNewSessionKeyring() throws(KernelKeyringError) -> KernelKey {
        let serial = keyctl_join_session_keyring(nil)
        guard serial >= 0 else { throw KernelKeyringError(operation: "join a new", key: "session keyring", errno: .current) }
        return KernelKey(serial: serial)
    }
}
