import Glibc
public import ProctorCrypto
import ProctorPolicy

/// The public keys a machine trusts to sign bundles: every `*.pub` file in one directory
/// (`/etc/proctor/keys.d`), more than one while keys are rotated.
public struct TrustedKeys: Sendable {
    /// The keys by key id.
    public let keys: [String: SigningPublicKey]

    public init(_ keys: [SigningPublicKey]) {
        self.keys = Dictionary(keys.map { ($0.keyID, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Loads every `*.pub` file in `directory`, in name order. A missing directory is no keys;
    /// an unreadable or malformed key file is an error naming the file, so a typo never goes
    /// unnoticed as a silently untrusted key.
    public static func load(directory: String) throws(CryptoError) -> TrustedKeys {
        guard let stream = opendir(directory) else {
            if errno == ENOENT { return TrustedKeys([]) }
            throw .keyFile(path: directory, operation: "open directory", errno: .current)
        }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if PolicyDirectory.isVisible(name, endingWith: ".pub") { names.append(name) }
        }
        closedir(stream)
        var keys: [SigningPublicKey] = []
        for name in names.sorted() {
            keys.append(try SigningPublicKey.load(from: directory.hasSuffix("/") ? directory + name : directory + "/" + name))
        }
        return TrustedKeys(keys)
    }
}
