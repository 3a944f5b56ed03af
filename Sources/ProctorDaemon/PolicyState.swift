import JSONCore
import LinuxIO
import ProctorPolicy
import ProctorProtocol
import ProctorStore
import Synchronization

/// `policy.d` as it last loaded, kept compiled rather than parsed (`CompiledPolicy.policy`
/// rebuilds the parsed form off the loop when a bundle is laid over it or a reload compares):
/// the parsed model of 100 000 apps is tens of megabytes an idle daemon would hold for nothing.
struct KeptDirectory: Sendable {
    let compiled: CompiledPolicy
    /// The file names, in merge order.
    let sources: [String]
}

/// The policy in force: `policy.d` (the last version of it that loaded) overlaid by the
/// last bundle applied through the Admin interface — the bundle wins where both say
/// something, since it is the newer, deliberate word of the MDM.
struct ActivePolicy: Sendable {
    let compiled: CompiledPolicy
    let sha256: String
    /// The ids of the managed apps, sorted (`CompiledPolicy.managedAppIDs`), and
    /// `Agent.AppViewPayload.digest(managedApps:)` of them: made here, off the event loop, since
    /// for 100 000 apps each takes milliseconds that a swap on the loop must not.
    let managedAppIDs: [AppID]
    let managedAppsDigest: String
    /// `policy.d` as it last loaded (nil when it never did): compiled alone when a bundle lies
    /// over it, else the very policy in force. Kept so that a bundle applied later overlays it
    /// even after a later reload failed.
    private(set) var directory: KeptDirectory?
    private(set) var sources: [String]
    private(set) var loadedAt: Int64

    var version: String { compiled.version }

    /// `policy.d` just read, or as kept from an earlier reading.
    enum Directory {
        case loaded(LoadedPolicy)
        case kept(KeptDirectory)
    }

    /// `bundle` laid over `directory`, compiled and hashed. Without a directory the policy in
    /// force is the bundle itself, whose hash is known: only the compile runs. A directory
    /// just read under a bundle is compiled on its own as well, to be kept.
    init(directory: Directory?, bundle: CanonicalPolicy?, bundleVersion: String?, loadedAt: Int64) {
        let policy: Policy
        let directoryAlone: Policy?
        switch (directory, bundle) {
        case let (.loaded(loaded)?, bundle?): (policy, directoryAlone) = (loaded.policy.overlaying(bundle.policy), loaded.policy)
        case let (.loaded(loaded)?, nil): (policy, directoryAlone) = (loaded.policy, nil)
        case let (.kept(kept)?, bundle?): (policy, directoryAlone) = (kept.compiled.policy.overlaying(bundle.policy), nil)
        case let (.kept(kept)?, nil): (policy, directoryAlone) = (kept.compiled.policy, nil)
        case let (nil, bundle?): (policy, directoryAlone) = (bundle.policy, nil)
        case (nil, nil): preconditionFailure("an active policy needs a directory or a bundle")
        }
        // Compiling and hashing share nothing and each take tens of milliseconds for a
        // large policy (both are on the start-up path before READY=1): run them side by side.
        // The managed apps' list and digest follow the compile on its thread, not the loop.
        // The compile is index 0, which the calling thread runs (`parallelFor`): the compiled
        // policy lies in that thread's malloc arena on every start (in a worker's, the idle
        // daemon of 100 000 apps kept ≈ 6 MiB more).
        let knownSHA256 = directory == nil ? bundle?.sha256 : nil
        let results = Mutex<(compiled: CompiledPolicy?, managed: ([AppID], String)?, sha256: String?, directory: CompiledPolicy?)>(
            (nil, nil, knownSHA256, nil))
        let tasks: [Task] = [.compile] + (knownSHA256 == nil ? [.hash] : []) + (directoryAlone == nil ? [] : [.compileDirectory])
        WorkerPool.shared.parallelFor(tasks.count) { index in
            switch tasks[index] {
            case .compile:
                let compiled = CompiledPolicy(policy)
                let ids = compiled.managedAppIDs
                let digest = Agent.AppViewPayload.digest(managedApps: ids)
                results.withLock { $0.compiled = compiled; $0.managed = (ids, digest) }
            case .hash:
                let sha256 = policy.sha256
                results.withLock { $0.sha256 = sha256 }
            case .compileDirectory:
                let compiled = CompiledPolicy(directoryAlone!)
                results.withLock { $0.directory = compiled }
            }
        }
        let directoryCompiled: CompiledPolicy?
        (compiled, (managedAppIDs, managedAppsDigest), sha256, directoryCompiled) = results.withLock {
            ($0.compiled!, $0.managed!, $0.sha256!, $0.directory)
        }
        switch directory {
        case .loaded(let loaded)?: self.directory = KeptDirectory(compiled: directoryCompiled ?? compiled, sources: loaded.sources)
        case .kept(let kept)?: self.directory = kept
        case nil: self.directory = nil
        }
        sources = Self.sources(directory: self.directory, bundleVersion: bundleVersion)
        self.loadedAt = loadedAt
    }

    private enum Task { case compile, hash, compileDirectory }

    /// The policy a snapshot holds (`PolicySnapshot.Contents`), whose SHA-256 is `sha256`, of
    /// `policy.d`'s files `sources` and the bundle `bundleVersion`: nothing is parsed,
    /// compiled or hashed but the managed apps' list, made again from the compiled table.
    init(restoring contents: PolicySnapshot.Contents, sha256: String, sources: [String], bundleVersion: String?,
         loadedAt: Int64) {
        compiled = contents.compiled
        self.sha256 = sha256
        managedAppIDs = compiled.managedAppIDs
        managedAppsDigest = contents.managedAppsDigest
        directory = KeptDirectory(compiled: contents.directory ?? contents.compiled, sources: sources)
        self.sources = Self.sources(directory: directory, bundleVersion: bundleVersion)
        self.loadedAt = loadedAt
    }

    /// This policy, read again from a policy.d whose files merge to the same policy as the
    /// ones it was compiled from (a reload of an unchanged policy.d, the common case), under
    /// the same bundle: the compiled form, hash and digest stand; the file names and the
    /// time are the new reading's.
    func reread(from directory: LoadedPolicy, bundleVersion: String?, at loadedAt: Int64) -> ActivePolicy {
        var policy = self
        if let kept = self.directory {
            policy.directory = KeptDirectory(compiled: kept.compiled, sources: directory.sources)
        }
        policy.sources = Self.sources(directory: policy.directory, bundleVersion: bundleVersion)
        policy.loadedAt = loadedAt
        return policy
    }

    private static func sources(directory: KeptDirectory?, bundleVersion: String?) -> [String] {
        (directory?.sources.map { "policy.d/" + $0 } ?? []) + (bundleVersion.map { ["applied bundle \($0)"] } ?? [])
    }

    /// `PolicyInfo` of the Admin interface.
    var info: Admin.PolicyInfo {
        Admin.PolicyInfo(version: version, sha256: sha256, sources: sources, loadedAt: Clock.rfc3339(loadedAt))
    }
}

/// A policy to be applied as the bundle (or read back as one), with its canonical text and
/// that text's SHA-256, each made once: the size check, the reused-version check,
/// `StateStore.apply` and — when there is no `policy.d`, so the bundle alone is in force —
/// `ActivePolicy` use these instead of serialising and hashing 100 000 apps again (an
/// `ApplyPolicy` did it four times, twice on the loop).
struct CanonicalPolicy: Sendable {
    let policy: Policy
    let text: String
    let sha256: String

    /// Serialises and hashes `policy`: run it off the loop.
    init(_ policy: Policy) {
        let bytes = policy.canonicalBytes
        self.policy = policy
        text = String(decoding: bytes, as: UTF8.self)
        sha256 = SHA256.hexDigest(bytes)
    }

    /// `policy` parsed from `record`, whose text and hash the store kept.
    init(_ policy: Policy, readFrom record: BundleRecord) {
        self.policy = policy
        text = record.canonicalJSON
        sha256 = record.sha256
    }
}

/// The outcome of the last attempt to re-read `policy.d`.
struct ReloadOutcome {
    let at: Int64
    let problems: [PolicyProblem]
    var ok: Bool { problems.isEmpty }

    /// `ReloadResult` of the Admin interface.
    var result: Admin.ReloadResult {
        Admin.ReloadResult(at: Clock.rfc3339(at), ok: ok, problems: problems.map(Admin.Problem.init))
    }
}
