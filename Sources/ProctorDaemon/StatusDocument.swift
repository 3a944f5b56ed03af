import JSONCore
import LinuxIO
import ProctorPolicy
import ProctorProtocol
import ProctorStore

/// What an app's detail (`Daemon.appDetail`) takes from the loop's memory besides the policy.
struct AppMemory: Sendable {
    var sessions: [Admin.Session] = []
    /// The latest lifecycle event still waiting for the history's write (newer than the store's).
    var queuedLifecycleEvent: Admin.LifecycleEvent?
}

/// The loop's part of a status document, taken at once on the loop (no store read): `Status`
/// without its count of known apps, the policy in force, and the memory of the apps that have
/// any. The rest — the known apps, each one's stored inventory and data keys, and the JSON —
/// is done by `StatusDocumentBuilder` on its own thread: with 10 000 known apps that is
/// hundreds of milliseconds the loop's clients would otherwise wait (`proctor-bench status`).
struct StatusSnapshot: Sendable {
    let machineID: String
    let sentAt: String
    let status: Admin.Status.Reply
    let active: ActivePolicy
    let memory: [AppID: AppMemory]
    /// `StatusMaxApps=`: the most apps the document lists.
    let maxApps: Int
}

/// A status document, serialised, and why it lists no apps when its builder could not read the store.
struct StatusDocument: Sendable {
    let bytes: [UInt8]
    /// Why the builder's connection to the store could not be opened (the document lists no
    /// apps and says so in `appsLeftOutReason`); nil when it could.
    let storeUnreadable: StoreError?
}

/// Builds status documents on a thread of its own, reading `state.db` through a read-only
/// connection of its own: the store is in WAL mode, so this reader never blocks the loop's
/// writes (nor they it) — except a shred's checkpoint: an administrator's wipe waits for a
/// read in progress up to the busy timeout, then fails; a retirement's or a violation's fails
/// at once and is retried (`StateStore.destroyDataKeys`). The connection is opened at the
/// first document and used only on `queue`.
final class StatusDocumentBuilder: @unchecked Sendable {
    /// Serial: documents are built, and handed back, in the order they were asked for.
    let queue = SerialWorkQueue()
    private let databasePath: String
    private var reader: StateStore?

    init(databasePath: String) {
        self.databasePath = databasePath
    }

    /// The document `snapshot` describes, serialised: what `proctorctl status --json` and one
    /// `proctorctl app ID --json` per known app show, with the machine's id. At most
    /// `snapshot.maxApps` apps are listed, the most relevant (`listed`); `appsLeftOut` says how
    /// many known apps (`status.counts.appsKnown`) the document does not list: those past the
    /// bound, an app the store cannot be read for, and every app while the store cannot be
    /// opened (its inventory is part of each app's entry; the count then has only the policy's),
    /// which `appsLeftOutReason` then explains.
    func build(_ snapshot: StatusSnapshot) -> StatusDocument {
        let opened = openReader()
        let store = try? opened.get()
        let storeUnreadable: StoreError? = if case .failure(let error) = opened { error } else { nil }
        let compiled = snapshot.active.compiled
        let seenOutsidePolicy = store.flatMap { try? Daemon.appsOutside(compiled, seenIn: $0) } ?? []
        var status = snapshot.status
        status.counts.appsKnown = compiled.appCount + seenOutsidePolicy.count
        // Written app by app, in the canonical key order (apps, appsLeftOut, appsLeftOutReason, machineId, sentAt, status): at
        // 100 000 apps a tree of the whole document would hold several times its 80 MB.
        var out = Array(#"{"apps":["#.utf8)
        var listed = 0
        for appID in Self.listed(compiled.appIDs + seenOutsidePolicy, atMost: snapshot.maxApps, memory: snapshot.memory, store: store) {
            // An app the store holds nothing about has no inventory (nil), which is not a failed read.
            guard let store, case .success(let inventory) = Result(catching: { () throws(StoreError) in try store.app(appID: appID) }),
                  let dataKeys = try? store.dataKeys(appID: appID),
                  let detail = Daemon.appDetail(appID, in: snapshot.active, inventory: inventory, dataKeys: dataKeys,
                                                memory: snapshot.memory[appID] ?? AppMemory())
            else { continue }
            if listed > 0 { out.append(UInt8(ascii: ",")) }
            listed += 1
            detail.json.write(to: &out)
        }
        out += #"],"appsLeftOut":"#.utf8
        JSONValue.number(status.counts.appsKnown - listed).write(to: &out)
        if let storeUnreadable {
            out += #","appsLeftOutReason":"#.utf8
            JSONValue.string("the state database cannot be read: \(storeUnreadable)").write(to: &out)
        }
        out += #","machineId":"#.utf8
        JSONValue.string(snapshot.machineID).write(to: &out)
        out += #","sentAt":"#.utf8
        JSONValue.string(snapshot.sentAt).write(to: &out)
        out += #","status":"#.utf8
        status.json.write(to: &out)
        out.append(UInt8(ascii: "}"))
        return StatusDocument(bytes: out, storeUnreadable: storeUnreadable)
    }

    /// The apps a document lists, sorted: all of `known`, or the `limit` most relevant to an
    /// administrator when there are more — the ones running now, then the most recently
    /// registered, then the rest (the same order on every machine: by id).
    static func listed(_ known: [AppID], atMost limit: Int, memory: [AppID: AppMemory], store: StateStore?) -> [AppID] {
        guard known.count > limit else { return known.sorted() }
        let registered = (try? store?.lastRegistrationTimes()) ?? [:]
        func rank(_ appID: AppID) -> (running: Bool, registeredAt: UnixMilliseconds) {
            (!(memory[appID]?.sessions.isEmpty ?? true), registered[appID] ?? .min)
        }
        let ranked = known.map { ($0, rank($0)) }.sorted { left, right in
            if left.1.running != right.1.running { return left.1.running }
            if left.1.registeredAt != right.1.registeredAt { return left.1.registeredAt > right.1.registeredAt }
            return left.0 < right.0
        }
        return ranked.prefix(limit).map(\.0).sorted()
    }

    /// The reader, opened now if it is not yet (or failed to open before), or why it cannot be.
    private func openReader() -> Result<StateStore, StoreError> {
        if let reader { return .success(reader) }
        let opened = Result { () throws(StoreError) in try StateStore.openReader(path: databasePath) }
        reader = try? opened.get()
        return opened
    }
}
