import Foundation
import Glibc
import JSONCore
import LinuxIO
import ProctorCrypto
import ProctorPolicy
import ProctorProtocol

/// The last view proctord signed for this app (`Agent.SignedAppView`), kept for launching while
/// proctord is unreachable: `$XDG_STATE_HOME/proctor/<app id>.view` (else
/// `~/.local/state/proctor/…`), mode 0600, replaced atomically on every view received.
///
/// The file is the app user's to write, so nothing in it is trusted until `load` checked it:
/// the signature must verify with the public key in `view-signing-key.pub` beside the Agent
/// socket — read anew at each offline launch, never from a place the user can write, so a user
/// cannot swap in a key of their own — and the view must name this app and this user, and bind
/// the set of managed apps stored beside it. How old it may be is the caller's to decide.
struct OfflineViewCache: Sendable {
    /// The public key's file name, beside the Agent socket (written by proctord; under systemd
    /// copied into `/run/proctor` by root).
    static let trustedKeyFileName = "view-signing-key.pub"
    /// A cached view larger than this is not one proctord sent (replies are capped alike).
    static let maximumBytes = VarlinkAgentTransport.maxMessageBytes

    /// The cache file.
    let path: String
    /// The trusted public key's file.
    let trustedKeyPath: String

    /// A cached view that passed every check but its age.
    struct Verified {
        let payload: Agent.AppViewPayload
        let managedApps: [AppID]
        /// Seconds since proctord signed it.
        let ageSeconds: Int
    }

    /// The file's content: the signed view and the managed apps it binds by their digest.
    struct CacheFile: ProtocolMessage {
        var payload: String
        var signature: String
        var managedApps: [String]
    }

    /// Why no cached view may be used, in words for the operator.
    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    /// The cache of `appID` for the current user; nil when the agent is not on a Varlink socket
    /// (no key to trust: the test kit's in-process agent), the user has no state or home
    /// directory, or the app id cannot name a file.
    static func forApp(_ appID: String, environment: [String: String], transport: any AgentTransport) -> OfflineViewCache? {
        // By bytes: "/" or "." followed by a combining mark is one Character that is neither.
        guard let socket = transport as? VarlinkAgentTransport, !appID.utf8.contains(UInt8(ascii: "/")),
              appID.utf8.first != UInt8(ascii: ".") else { return nil }
        let base: String
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            base = state
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            base = home + "/.local/state"
        } else {
            return nil
        }
        let keyPath = URL(fileURLWithPath: socket.path).deletingLastPathComponent().path + "/" + trustedKeyFileName
        return OfflineViewCache(path: base + "/proctor/" + appID + ".view", trustedKeyPath: keyPath)
    }

    // MARK: Writing

    /// Replaces the cached view with `view` and the set of managed apps it binds: atomically
    /// (a new file renamed over the old one) while the process may create files in the folder;
    /// once the export rule confines it (`dlp.fileExport.enforcement: "kernel"`), Landlock lets
    /// it write this one file and nothing else there (`fileForConfinement()`), so the view is
    /// written over the file in place. A crash in the middle of that leaves a file whose
    /// signature fails: the next offline launch is refused, never made on a forged view.
    func save(_ view: Agent.SignedAppView, managedApps: [AppID]) throws(Refusal) {
        let bytes = CacheFile(payload: view.payload, signature: view.signature, managedApps: managedApps).json.serialized()
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw Refusal(description: "cannot create the folder of \(path): \(error.localizedDescription)")
        }
        let replaced = Result { () throws(FileReplacementError) in
            let replacement = try AtomicFileReplacement(replacing: path, mode: 0o600)
            try replacement.write(bytes)
            try replacement.commit()
        }
        switch replaced {
        case .success:
            return
        case .failure(let error) where error.errno.rawValue == EACCES:
            do throws(Errno) { try overwrite(with: bytes) } catch {
                throw Refusal(description: "cannot write the offline view \(path) in place: \(error)")
            }
        case .failure(let error):
            throw Refusal(description: "cannot write the offline view \(path): \(error)")
        }
    }

    /// Writes `bytes` over the existing cache file, the way a confined process can.
    private func overwrite(with bytes: [UInt8]) throws(Errno) {
        let file = try FileDescriptor.open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        defer { try? file.close() }
        try file.writeAll(bytes)
        guard ftruncate(file.rawValue, off_t(bytes.count)) == 0, fsync(file.rawValue) == 0 else { throw Errno.current }
    }

    /// Removes the cached view (after an offline wipe: nothing is left to launch with); a
    /// confined process, which may not remove it, empties it instead (an empty file is no view).
    func remove() {
        guard unlink(path) != 0, errno == EACCES else { return }
        let file = open(path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC)
        if file >= 0 { close(file) }
    }

    /// The cache file, checked and open, for the export rule's Landlock layer to allow: `path`
    /// names it in the layer's places, `descriptor` is what the rule is added on.
    struct ConfinedFile {
        let path: String
        /// Open on the file that was checked; the caller closes it once the layer is in force.
        let descriptor: FileDescriptor
    }

    /// The cache file, created empty (0600, in a 0700 folder) if missing, for the export rule's
    /// Landlock layer to allow: writing and truncating this file only, not creating, renaming
    /// or removing anything in its folder. Nil, with why, when it is not this user's own
    /// regular file with a single name — a link would let the app write through it elsewhere.
    /// The rule is added on the descriptor returned, the file checked here: by its path, a link
    /// put in its place meanwhile would get the rule.
    func fileForConfinement() -> Result<ConfinedFile, Refusal> {
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            return .failure(Refusal(description: "cannot create the folder of \(path): \(error.localizedDescription)"))
        }
        let file: FileDescriptor, status: stat
        do throws(Errno) {
            file = try FileDescriptor.open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, mode: 0o600)
        } catch .init(rawValue: ELOOP) {
            return .failure(Refusal(description: "\(path) is a symbolic link, not this user's own file"))
        } catch {
            return .failure(Refusal(description: "cannot open the offline view \(path): \(error)"))
        }
        do throws(Errno) { status = try file.status() } catch {
            try? file.close()
            return .failure(Refusal(description: "cannot open the offline view \(path): \(error)"))
        }
        guard status.st_mode & S_IFMT == S_IFREG, status.st_nlink == 1, status.st_uid == geteuid() else {
            try? file.close()
            return .failure(Refusal(description: "\(path) is not this user's own file with a single name"))
        }
        return .success(ConfinedFile(path: path, descriptor: file))
    }

    private var folder: String { URL(fileURLWithPath: path).deletingLastPathComponent().path }

    // MARK: Reading

    /// The cached view, checked against the trusted key, `appID` and `uid`, `now` being
    /// milliseconds since the epoch.
    func load(appID: AppID, uid: uid_t, now: Int64) throws(Refusal) -> Verified {
        let key = try trustedKey()
        guard let data = FileManager.default.contents(atPath: path), !data.isEmpty else {
            throw Refusal(description: "no cached view at \(path)")
        }
        guard data.count <= Self.maximumBytes else { throw Refusal(description: "the cached view \(path) is too large") }
        let view: Agent.SignedAppView
        let managedApps: [String]
        do {
            let file = try CacheFile(JSONParser.parse(Array(data)).objectValue ?? [:])
            view = Agent.SignedAppView(payload: file.payload, signature: file.signature)
            managedApps = file.managedApps
        } catch {
            throw Refusal(description: "the cached view \(path) is malformed: \(error)")
        }
        guard let signature = Base64.decode(view.signature) else {
            throw Refusal(description: "the cached view \(path) has no valid signature")
        }
        do {
            try key.verify(signature: signature, of: Array(view.payload.utf8))
        } catch {
            throw Refusal(description: "the cached view \(path) is not signed by proctord's view-signing key (\(error))")
        }
        let payload: Agent.AppViewPayload
        do {
            payload = try Agent.AppViewPayload(try JSONParser.parse(view.payload).objectValue ?? [:])
        } catch {
            throw Refusal(description: "the cached view's payload is malformed: \(error)")
        }
        guard payload.appId == appID else { throw Refusal(description: "the cached view is for \(payload.appId), not \(appID)") }
        guard payload.uid == Int(uid) else { throw Refusal(description: "the cached view is for uid \(payload.uid), not \(uid)") }
        guard Agent.AppViewPayload.digest(managedApps: managedApps) == payload.managedAppsSHA256 else {
            throw Refusal(description: "the managed apps stored with the cached view are not the ones proctord signed")
        }
        let issuedAt = RFC3339.milliseconds(payload.issuedAt) ?? now
        // A view from the future means the clock went back: its age cannot be told.
        guard issuedAt <= now + 300_000 else {
            throw Refusal(description: "the cached view was issued at \(payload.issuedAt), after now: the clock was set back")
        }
        return Verified(payload: payload, managedApps: managedApps, ageSeconds: Int(max(0, now - issuedAt) / 1000))
    }

    /// The public key beside the Agent socket, refused when its file or folder could have been
    /// written by this (non-root) user or by group or others.
    private func trustedKey() throws(Refusal) -> SigningPublicKey {
        let folder = URL(fileURLWithPath: trustedKeyPath).deletingLastPathComponent().path
        for checked in [folder, trustedKeyPath] {
            var status = stat()
            guard stat(checked, &status) == 0 else {
                throw Refusal(description: "cannot read proctord's view-signing key \(checked): \(Errno.current)")
            }
            let euid = geteuid()
            if euid != 0, status.st_uid == euid {
                throw Refusal(description: "\(checked) belongs to this app's user, who could have replaced the view-signing key")
            }
            if status.st_mode & 0o022 != 0, status.st_mode & S_ISVTX == 0 {
                throw Refusal(description: "\(checked) is writable by group or others, so the view-signing key cannot be trusted")
            }
        }
        do {
            return try SigningPublicKey.load(from: trustedKeyPath)
        } catch {
            throw Refusal(description: "cannot read proctord's view-signing key: \(error)")
        }
    }
}

extension OfflineViewCache {
    /// Keeps `update`'s signed view, if it has one; returns why it could not, for the operator.
    func keep(_ update: AgentUpdate) -> String? {
        guard let view = update.signedView else { return nil }
        do {
            try save(view, managedApps: update.managedApps)
            return nil
        } catch {
            return "\(error); an offline launch will use an older view or none"
        }
    }
}
