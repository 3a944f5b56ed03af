import Glibc
import JSONCore
import LinuxIO
import ProctorPolicy
import ProctorProtocol
import Varlink

/// What the daemon knows about one client connection: who connected (from the kernel, at
/// accept time) and the sessions opened on it, which die with it.
final class ConnectionContext {
    /// The process that connected. Not who registers: `Register` checks its own sender.
    let peer: PeerIdentity
    /// Root or a member of the admin group; checked again on every Admin call.
    let mayAdminister: Bool
    var sessions: [String: AgentSession] = [:] {
        didSet {
            if sessions.isEmpty { lastSessionFound = nil }
            guard !sessions.isEmpty, let onFirstSession else { return }
            self.onFirstSession = nil
            onFirstSession()
        }
    }
    /// Called when the connection gets its first session (the transport then stops the
    /// clock that closes connections that never register).
    var onFirstSession: (() -> Void)?
    /// Whether the kernel still hands over a pidfd with each message on this connection.
    /// They are needed to verify `Register`; once the connection has a session, calls on
    /// it are checked against the registered process without them (`AgentSession`).
    private(set) var receivesSenderProcesses = true
    /// Turns the transport's per-message pidfds on or off (nothing where there is no socket).
    var setReceivesSenderProcesses: (Bool) -> Void = { _ in }

    init(peer: PeerIdentity, mayAdminister: Bool) {
        self.peer = peer
        self.mayAdminister = mayAdminister
    }

    /// The session `session(_:)` found last: an app asks with the same id call after call,
    /// which is then compared, not hashed.
    private var lastSessionFound: AgentSession?

    /// The session `id` names on this connection.
    func session(_ id: String) -> AgentSession? {
        if let last = lastSessionFound, last.id == id { return last }
        let found = sessions[id]
        if found != nil { lastSessionFound = found }
        return found
    }

    /// The session whose id's UTF-8 bytes are `id`: compared with the session found last
    /// before a `String` is made, which only a call naming another session costs.
    func session(idBytes id: UnsafeRawBufferPointer) -> AgentSession? {
        if let last = lastSessionFound, !id.isEmpty, last.idBytes.count == id.count,
           memcmp(last.idBytes.baseAddress!, id.baseAddress!, id.count) == 0 {
            return last
        }
        return session(String(decoding: id, as: UTF8.self))
    }

    /// The id of the session found last, for a plain `Decide`'s reader to compare the call's
    /// with where it lies (`Agent.Decide.PlainRequest.read(_:knownSessionID:)`); nil before any.
    var lastSessionID: UnsafeRawBufferPointer? { lastSessionFound?.idBytes }

    /// The session a plain `Decide` names: the one found last when the reader found the call's
    /// id to be that one's (`sessionIsKnown`, compared with `lastSessionID` as it read), with
    /// no comparison here; else as `session(idBytes:)`.
    func session(of request: Agent.Decide.PlainRequest) -> AgentSession? {
        if request.sessionIsKnown, let last = lastSessionFound { return last }
        return session(idBytes: request.session)
    }

    func receiveSenderProcesses(_ on: Bool) {
        guard on != receivesSenderProcesses else { return }
        receivesSenderProcesses = on
        setReceivesSenderProcesses(on)
    }

    /// The process handle of one of this connection's sessions that `sender` is known to
    /// be (same pid, that process still alive after the message was received), so a
    /// further `Register` from a registered process is verified on that pidfd.
    func registeredProcess(of sender: SenderCredentials) -> ProcessHandle? {
        for session in sessions.values where session.process != nil && session.isRegisteringProcess(sender) {
            return session.process
        }
        return nil
    }
}

/// A registered app on one connection.
final class AgentSession {
    let id: String
    /// `id`'s UTF-8 bytes, which a plain `Decide` call's are compared with
    /// (`ConnectionContext.lastSessionID`, `session(idBytes:)`): in memory of their own, which a
    /// reader compares in place with no array to retain.
    let idBytes: UnsafeRawBufferPointer
    let appID: AppID
    /// The process that sent `Register`, as verified then (logs, `proctorctl app`).
    let peer: PeerIdentity
    /// A pidfd of that process (where the kernel hands one over), so a later process that
    /// got the same pid is not taken for it.
    let process: ProcessHandle?
    let appVersion: String?
    /// `appVersion` parsed, for `launch` decisions; nil when absent or not a version.
    let semanticVersion: SemanticVersion?
    let registeredAt: Int64
    /// The open `Subscribe` call, if the app subscribed.
    var subscription: (any SubscriptionHandle)?
    /// The app's view (state, config, rules) the subscriber last heard, so that a policy
    /// change that does not concern this app sends nothing.
    var lastView: AppView?
    /// The launch verdict the session was last sent, so a change of it (a raised
    /// `minVersion`, say) is pushed even when nothing else of the view changed.
    var lastLaunch: Agent.LaunchVerdict?
    /// The `AgentRegistry` generation of the set of managed apps this session was last
    /// sent; -1: never.
    var managedAppsGeneration = -1
    /// When the subscriber's signed view is signed anew (`AgentRegistry.viewRefreshDelay`).
    var viewRefreshTimer: TimerHandle?
    /// Who enforces the export rule in the process, as the SDK last reported it.
    var fileExportEnforcement: Admin.FileExportEnforcement?
    /// The journal fields that end each of the session's decision lines (`SESSION=` and the
    /// peer's), rendered once: a denied `Decide` logs them with every call.
    let decisionLogFields: [(String, String)]
    /// Where the app stands in the policy of its last decision
    /// (`CompiledPolicy.engineDecision(app:remembering:…)`: no hash lookup of its id per `Decide`), behind a
    /// pointer so that reading and updating it on every call has no run-time exclusivity check.
    let policyPlace = UnsafeMutablePointer<CompiledPolicy.AppPlace?>.allocate(capacity: 1)
    /// The `Decide` replies the app has been sent, kept to be copied when the same is sent
    /// again (`Agent.Decide.DirectReply`), and the app's id they are rendered with; behind a
    /// pointer for the same reason.
    let decideReplies = UnsafeMutablePointer<DecisionAnswers>.allocate(capacity: 1)

    init(id: String, appID: AppID, peer: PeerIdentity, process: ProcessHandle? = nil, appVersion: String?,
         registeredAt: Int64) {
        self.id = id
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: id.utf8.count, alignment: 8)
        bytes.copyBytes(from: id.utf8)
        idBytes = UnsafeRawBufferPointer(bytes)
        self.appID = appID
        self.peer = peer
        self.process = process
        self.appVersion = appVersion
        self.semanticVersion = appVersion.flatMap(SemanticVersion.init)
        self.registeredAt = registeredAt
        decisionLogFields = [(DaemonEventField.session, id)] + peer.logFields
        policyPlace.initialize(to: nil)
        decideReplies.initialize(to: Agent.Decide.DirectReply.answers(to: appID))
    }

    deinit {
        idBytes.deallocate()
        policyPlace.deinitialize(count: 1).deallocate()
        decideReplies.deinitialize(count: 1).deallocate()
    }

    /// The `launch` question for this app at the version it registered with.
    var launchRequest: DecisionRequest {
        DecisionRequest(app: appID, action: .launch, appVersion: semanticVersion)
    }

    /// Whether a message with these kernel-stamped credentials came from the process that
    /// registered this session.
    ///
    /// The sender's pid (stamped on every message) must be the registered one. A pid names
    /// one process only while that process lives, so the registered process must also have
    /// been alive *after* the message was received: then it held the pid when the message
    /// was written, and no later process that got the pid can use the session. That is
    /// asked of the daemon's `ProcessExitWatch`, where the session's pidfd is watched: one
    /// `epoll_wait` after a batch of reads answers for every session's process, not a pidfd
    /// per message (the connection stops receiving those once it has a session) nor a
    /// `poll` per read. A message that still carries its sender's pidfd is compared on it;
    /// without pidfds at all (kernels before 6.5) the pid is all there is.
    ///
    /// Why an `epoll_wait` after the read rather than the pidfd on the loop's own epoll
    /// (readable once the process has exited), which would save the system call: the loop's
    /// epoll can only say the process was alive when `epoll_wait` last returned, which is
    /// *before* the read — a message written in between may come from a later process that
    /// got the pid. The registered process's parent can arrange that: it cycles the pid
    /// counter to just below that pid, kills and reaps the process, and its next fork gets
    /// the pid; calls on other connections widen the gap between `epoll_wait` and this
    /// connection's read.
    func isRegisteringProcess(_ sender: SenderCredentials?) -> Bool {
        // The sender's members are read where they are: binding `sender` copied it (and
        // retained its pidfd, if any) on every call.
        guard sender?.pid == peer.pid else { return false }
        // Nor is `process` bound, which retained it for the call.
        guard process != nil else { return true }
        if let senderProcess = sender?.process { return process?.refersToSameProcess(as: senderProcess) == true }
        return process?.wasAlive(afterReceipt: sender?.receipt ?? 0) == true
    }
}

/// Everything an app is told about itself: what `Register` and `Subscribe` carry.
struct AppView: Equatable {
    var state: AppState
    var config: [String: JSONValue]
    var dlp: [String: JSONValue]
    var compliance: [String: JSONValue]

    init?(of app: AppID, in policy: CompiledPolicy) {
        guard let entry = policy.appPolicy(app), let rules = policy.effectiveRules(for: app) else { return nil }
        state = entry.state
        config = entry.config
        dlp = rules["dlp"]?.objectValue ?? [:]
        compliance = rules["compliance"]?.objectValue ?? [:]
    }

    /// The same bytes, not merely equal strings: a path or config value respelt in another
    /// Unicode form is another view, which its subscribers must be sent.
    static func == (left: AppView, right: AppView) -> Bool {
        left.state == right.state && JSONValue.object(left.config).hasSameBytes(as: .object(right.config))
            && JSONValue.object(left.dlp).hasSameBytes(as: .object(right.dlp))
            && JSONValue.object(left.compliance).hasSameBytes(as: .object(right.compliance))
    }
}

/// Session ids: 128 random bits, hex. Unguessable, so a session id proves nothing on its
/// own anyway — sessions are also bound to their connection.
enum SessionID {
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64, low = generator.next() as UInt64
        func hex(_ value: UInt64) -> String {
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }
        return hex(high) + hex(low)
    }
}
