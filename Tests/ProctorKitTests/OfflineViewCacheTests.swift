import Foundation
import Glibc
import JSONCore
import LinuxIO
import ProctorCrypto
import ProctorPolicy
import ProctorProtocol
import Testing
import TestSupport
@testable import ProctorKit

/// The checks `OfflineViewCache` makes before an offline launch that the process tests
/// (OfflineLaunchTests) cannot reach as root: the trusted key's file and folder, the managed-app
/// set stored beside the view, and the file it writes.
@Suite struct OfflineViewCacheTests {
    let directory: TemporaryDirectory
    let key: SigningKeyPair
    let cache: OfflineViewCache
    static let managedApps = ["com.example.mail", "com.example.notes"]

    init() throws {
        directory = try TemporaryDirectory(prefix: "proctor-view-cache")
        let run = directory.appending("run")
        try FileManager.default.createDirectory(at: run, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        key = try SigningKeyPair.generate()
        try key.publicKey.save(to: run.appendingPathComponent("view-signing-key.pub").path)
        cache = try #require(OfflineViewCache.forApp("com.example.notes", environment: ["HOME": directory.path],
                                                     transport: VarlinkAgentTransport(path: run.path + "/io.proctor.Agent")))
    }

    /// A view of com.example.notes for `uid`, signed by `key`, issued `now`.
    func view(uid: Int = 0) -> Agent.SignedAppView {
        let snapshot = Agent.AppSnapshot(state: .authorized, policyVersion: "7", config: [:], dlp: [:], compliance: [:],
                                         launch: Agent.LaunchVerdict(allowed: true, rule: "r", reason: "ok", violation: nil),
                                         directives: [])
        let payload = Agent.AppViewPayload(appId: "com.example.notes", uid: uid, issuedAt: RFC3339.string(milliseconds: now),
                                           snapshot: snapshot, managedAppsSHA256: Agent.AppViewPayload.digest(managedApps: Self.managedApps))
        let bytes = payload.json.serialized()
        return Agent.SignedAppView(payload: String(decoding: bytes, as: UTF8.self), signature: Base64.encode(key.sign(bytes)))
    }

    /// The path of the file `fileForConfinement` offers, its descriptor closed.
    func offeredPath() throws -> String {
        let file = try cache.fileForConfinement().get()
        try? file.descriptor.close()
        return file.path
    }

    var now: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    @Test func keepsTheViewInTheUsersStateFolderReplacedAtomically() throws {
        #expect(cache.path == directory.appending(".local/state/proctor/com.example.notes.view").path)
        try cache.save(view(), managedApps: Self.managedApps)
        try cache.save(view(), managedApps: Self.managedApps)
        let attributes = try FileManager.default.attributesOfItem(atPath: cache.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let folder = URL(fileURLWithPath: cache.path).deletingLastPathComponent().path
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["com.example.notes.view"], "no temporary file is left")
        let verified = try cache.load(appID: "com.example.notes", uid: 0, now: now)
        #expect(verified.managedApps == Self.managedApps && verified.ageSeconds <= 1)
    }

    @Test func offersItsOwnFileToTheExportRuleCreatedEmptyWhichIsNoView() throws {
        #expect(try offeredPath() == cache.path)
        let attributes = try FileManager.default.attributesOfItem(atPath: cache.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600 && (attributes[.size] as? Int) == 0)
        do {
            _ = try cache.load(appID: "com.example.notes", uid: 0, now: now)
            Issue.record("an empty file was taken for a view")
        } catch {
            #expect(error.description == "no cached view at \(cache.path)")
        }
        try cache.save(view(), managedApps: Self.managedApps)
        #expect(try offeredPath() == cache.path, "an existing view is kept as it is")
        #expect(try cache.load(appID: "com.example.notes", uid: 0, now: now).managedApps == Self.managedApps)
    }

    /// Landlock would allow the file a link leads to: a link put in the cache's place could let
    /// the confined app write wherever the user pointed it.
    @Test(arguments: ["symbolic", "hard"])
    func offersNoLinkToTheExportRule(_ kind: String) throws {
        let elsewhere = directory.appending("Desktop-file").path
        #expect(FileManager.default.createFile(atPath: elsewhere, contents: Data()))
        try FileManager.default.createDirectory(atPath: URL(fileURLWithPath: cache.path).deletingLastPathComponent().path,
                                                withIntermediateDirectories: true)
        #expect((kind == "hard" ? link(elsewhere, cache.path) : symlink(elsewhere, cache.path)) == 0)
        guard case .failure(let refusal) = cache.fileForConfinement() else {
            Issue.record("a \(kind) link was offered to the export rule")
            return
        }
        #expect(refusal.description.contains(kind == "hard" ? "is not this user's own file with a single name" : "is a symbolic link"))
    }

    /// The rule must name the file that was checked: a link put in the file's place after the
    /// check (by any process of the user) would otherwise get the rule, and a link to a folder
    /// would allow writing anywhere beneath it.
    @Test func theExportRuleNamesTheFileThatWasCheckedNotWhatItsPathLeadsToLater() throws {
        let offered = try cache.fileForConfinement().get()
        defer { try? offered.descriptor.close() }
        let elsewhere = directory.appending("Desktop").path
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        #expect(unlink(cache.path) == 0 && symlink(elsewhere, cache.path) == 0)
        #expect(failureInForkedChild {
            try Landlock.restrictModifications(toBeneath: [], places: [offered.descriptor])
            let file = open(elsewhere + "/exported", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            try ensure(file < 0 && errno == EACCES, "a file was created beneath the folder the link leads to")
            // The checked file itself, which only the descriptor still reaches, stays writable.
            let checked = open("/proc/self/fd/\(offered.descriptor.rawValue)", O_WRONLY | O_CLOEXEC)
            try ensure(checked >= 0, "the checked file cannot be written: errno \(errno)")
        } == nil)
    }

    @Test func refusesManagedAppsTheSignatureDoesNotBind() throws {
        try cache.save(view(), managedApps: Self.managedApps + ["org.example.exfiltrate"])
        #expect(throws: OfflineViewCache.Refusal.self) { try cache.load(appID: "com.example.notes", uid: 0, now: now) }
    }

    @Test(arguments: ["file", "folder"])
    func refusesAKeyOthersCouldHaveReplaced(_ which: String) throws {
        try cache.save(view(), managedApps: Self.managedApps)
        let path = which == "file" ? cache.trustedKeyPath : URL(fileURLWithPath: cache.trustedKeyPath).deletingLastPathComponent().path
        #expect(chmod(path, which == "file" ? 0o666 : 0o777) == 0)
        do {
            _ = try cache.load(appID: "com.example.notes", uid: 0, now: now)
            Issue.record("a \(which) writable by others was trusted")
        } catch {
            #expect(error.description.contains("is writable by group or others, so the view-signing key cannot be trusted"))
        }
    }

    @Test func refusesAViewFromTheFuture() throws {
        try cache.save(view(), managedApps: Self.managedApps)
        #expect(throws: OfflineViewCache.Refusal.self) {
            try cache.load(appID: "com.example.notes", uid: 0, now: now - 3_600_000)
        }
    }

    @Test func noCacheForTheInProcessAgentOrWithoutAHome() throws {
        struct InProcess: AgentTransport { func connect() throws -> any AgentConnection { throw TestSupportError("unused") } }
        #expect(OfflineViewCache.forApp("com.example.notes", environment: ["HOME": "/home/x"], transport: InProcess()) == nil)
        let socket = VarlinkAgentTransport(path: "/run/proctor/io.proctor.Agent")
        #expect(OfflineViewCache.forApp("com.example.notes", environment: [:], transport: socket) == nil)
        #expect(OfflineViewCache.forApp("../evil", environment: ["HOME": "/home/x"], transport: socket) == nil)
        // "/" or "." followed by a combining mark is one Character that is neither: checked by bytes.
        #expect(OfflineViewCache.forApp("a/\u{301}b", environment: ["HOME": "/home/x"], transport: socket) == nil)
        #expect(OfflineViewCache.forApp(".\u{301}b", environment: ["HOME": "/home/x"], transport: socket) == nil)
        #expect(OfflineViewCache.forApp("com.example.notes", environment: ["XDG_STATE_HOME": "/state", "HOME": "/home/x"],
                                        transport: socket)?.path == "/state/proctor/com.example.notes.view")
    }
}
