import Glibc
import JSONCore
import LinuxIO
import ProctorCrypto
import ProctorProtocol
import ProctorStore

/// proctord's view-signing key: an Ed25519 key pair (ProctorCrypto) whose private half stays in
/// the state directory (`view-signing-key`, 0600, created the first time) and whose public half
/// anyone may read — answered by `Agent.GetInfo` and written as `view-signing-key.pub` in the
/// runtime directory, beside the sockets (the systemd unit copies it up to `/run/proctor`, which
/// only root writes). Every app view proctord sends is signed with it, so ProctorKit can launch
/// an app from a view cached where its user can write while proctord is unreachable.
final class ViewSigner {
    static let privateKeyName = "view-signing-key"
    static let publicKeyName = "view-signing-key.pub"

    let keyPair: SigningKeyPair
    /// The last view signed. A push to many sessions of one app and user at one version signs
    /// their common view once: the same payload signed less than `reuseMilliseconds` ago is
    /// sent with that signature and `issuedAt` (Ed25519 is deterministic, so this is the
    /// signature signing again would give; the view only looks that much older, so it expires
    /// sooner offline, never later).
    private var lastSigned: (payload: Agent.AppViewPayload, signedAt: UnixMilliseconds, view: Agent.SignedAppView)?
    static let reuseMilliseconds: UnixMilliseconds = 1000

    init(keyPair: SigningKeyPair) { self.keyPair = keyPair }

    /// The public key's one-line text form (`ed25519 <key id> <Base64 key>`).
    var publicKeyText: String { keyPair.publicKey.text }

    /// The snapshot of `payload` issued `now` (milliseconds since the epoch), as JSON text with
    /// its signature — or the last view signed, when it says the same and is recent.
    func sign(_ payload: Agent.AppViewPayload, now: UnixMilliseconds) -> Agent.SignedAppView {
        if let last = lastSigned, now >= last.signedAt, now - last.signedAt < Self.reuseMilliseconds {
            var candidate = payload
            candidate.issuedAt = last.payload.issuedAt
            if candidate == last.payload { return last.view }
        }
        var issued = payload
        issued.issuedAt = Clock.rfc3339(now)
        let bytes = issued.json.serialized()
        let view = Agent.SignedAppView(payload: String(decoding: bytes, as: UTF8.self), signature: Base64.encode(keyPair.sign(bytes)))
        lastSigned = (issued, now, view)
        return view
    }

    /// The key pair of the state directory (created there the first time), its public half
    /// published in the runtime directory.
    static func load(_ configuration: DaemonConfiguration) throws(StartupError) -> ViewSigner {
        let path = configuration.stateDirectory + "/" + privateKeyName
        let keyPair: SigningKeyPair
        do {
            if access(path, F_OK) == 0 {
                keyPair = try SigningKeyPair.load(privateKeyFrom: path)
            } else {
                keyPair = try SigningKeyPair.generate()
                try keyPair.save(privateKeyTo: path)
            }
        } catch {
            throw StartupError(message: "cannot load or create the view-signing key: \(error)", errno: EIO)
        }
        try publish(keyPair.publicKey, in: configuration.runtimeDirectory)
        return ViewSigner(keyPair: keyPair)
    }

    /// Replaces `view-signing-key.pub` in `directory` atomically, mode 0644 whatever the umask.
    private static func publish(_ key: SigningPublicKey, in directory: String) throws(StartupError) {
        let destination = directory + "/" + publicKeyName
        do throws(FileReplacementError) {
            let replacement = try AtomicFileReplacement(replacing: destination, mode: 0o644)
            try replacement.write(Array((key.text + "\n").utf8))
            guard chmod(replacement.temporaryPath, 0o644) == 0 else {
                throw FileReplacementError(operation: "chmod", path: replacement.temporaryPath, errno: .current)
            }
            try replacement.commit()
        } catch {
            throw StartupError(message: "cannot publish the view-signing public key: \(error)", errno: error.errno.rawValue)
        }
    }
}
