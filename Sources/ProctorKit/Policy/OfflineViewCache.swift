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

    /// Replaces the cached view with `view` and the set of managed apps it binds.
    func save(_ view: Agent.SignedAppView, managedApps: [AppID]) throws(Refusal) {
        let file = CacheFile(payload: view.payload, signature: view.signature, managedApps: managedApps)
        do {
            try FileManager.default.createDirectory(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path,
                                                    withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw Refusal(description: "cannot create the folder of \(path): \(error.localizedDescription)")
        }
        do throws(FileReplacementError) {
            let replacement = try AtomicFileReplacement(replacing: path, mode: 0o600)
            try replacement.write(file.json.serialized())
            try replacement.commit()
        } catch {
            throw Refusal(description: "cannot write the offline view \(path): \(error)")
        }
    }

    /// Removes the cached view (after an offline wipe: nothing is left to launch with).
    func remove() { unlink(path) }

    // MARK: Reading

    /// The cached view, checked against the trusted key, `appID` and `uid`, `now` being
    /// milliseconds since the epoch.
    func load(appID: AppID, uid: uid_t, now: Int64) throws(Refusal) -> Verified {
        let key = try trustedKey()
        guard let data = FileManager.default.contents(atPath: path) else {
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
