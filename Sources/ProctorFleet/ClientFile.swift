import Glibc
import LinuxIO

extension FleetConfiguration {
    /// `ClientCertificate=` or `ClientKey=`: a file by absolute path, or `@NAME`, the systemd
    /// credential NAME (systemd-networkd's spelling for a key given as a credential).
    ///
    /// Under `DynamicUser=` a credential is the way to give proctord a private key: systemd
    /// reads the root-only file (`LoadCredential=NAME:PATH`, or decrypts
    /// `LoadCredentialEncrypted=`) and exposes it at `$CREDENTIALS_DIRECTORY/NAME`, readable by
    /// the service alone. A file in /etc cannot be both root-only and readable by a dynamic user.
    public enum ClientFile: Sendable, Hashable, CustomStringConvertible {
        case path(String)
        /// The credential `name`, found at `path` (`$CREDENTIALS_DIRECTORY/name`).
        case credential(name: String, path: String)

        /// The file libcurl reads.
        public var path: String {
            switch self {
            case .path(let path), .credential(_, let path): path
            }
        }

        /// As written in proctord.conf.
        public var description: String {
            switch self {
            case .path(let path): path
            case .credential(let name, _): "@" + name
            }
        }

        /// Why proctord will not use this file, or nil. It must open for reading; a private key
        /// given by path must also be owned by root or by `ownUID` (proctord's uid) and give
        /// group and others no access at all — ssh's rule for a private key, because anyone
        /// else who can read it can act as this machine towards the MDM, and anyone else who
        /// owns it can make it readable. A credential is systemd's copy, private to the service
        /// by construction, so only its presence is checked.
        public func problem(isPrivateKey: Bool, ownUID: UInt32? = nil) -> String? {
            let ownUID = ownUID ?? geteuid()
            let descriptor: FileDescriptor
            do { descriptor = try FileDescriptor.open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK) } catch {
                return openProblem(error, isPrivateKey: isPrivateKey)
            }
            defer { try? descriptor.close() }
            let status: stat
            do { status = try descriptor.status() } catch { return "cannot stat \(path): \(error)" }
            guard status.st_mode & S_IFMT == S_IFREG else { return "\(path) is not a regular file" }
            guard isPrivateKey, case .path = self else { return nil }
            guard status.st_uid == 0 || status.st_uid == ownUID else {
                return "\(path) is owned by uid \(status.st_uid), expected root or proctord's own uid \(ownUID): "
                    + "its owner could let others read the private key"
            }
            guard status.st_mode & 0o077 == 0 else {
                return "\(path) has mode \(String(status.st_mode & 0o7777, radix: 8)): a private key must not be "
                    + "accessible by group or others (chmod 600 \(path))"
            }
            return nil
        }

        private func openProblem(_ error: Errno, isPrivateKey: Bool) -> String {
            switch self {
            case .credential(let name, let path) where error == .noSuchFileOrDirectory:
                let directory = String(path.dropLast(name.utf8.count + 1))
                return "the credential \(name) is not in $CREDENTIALS_DIRECTORY (\(directory)): add "
                    + "LoadCredential=\(name):/etc/proctor/\(name) to proctord's unit (docs/fleet.md)"
            case .path(let path) where error == .permissionDenied && isPrivateKey:
                return "cannot open \(path): \(error); proctord runs as a dynamic user: give the key as a "
                    + "credential, ClientKey=@NAME with LoadCredential=NAME:\(path) in its unit (docs/fleet.md)"
            default:
                return "cannot open \(path): \(error)"
            }
        }
    }
}
