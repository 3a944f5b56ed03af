import CSystemd
import Dispatch
import Glibc

/// The process's logind session, watched through libsystemd's `sd_login` API.
///
/// `sd_pid_get_session` finds the session from the process's cgroup; `sd_session_is_active`
/// says whether it is in the foreground of its seat (a session without a seat, like SSH, is
/// always active); `sd_seat_get_active` names the user whose session holds the seat. An
/// `sd_login_monitor` descriptor (inotify on `/run/systemd`) wakes the main queue on every
/// change, and the monitor re-reads those three facts.
@MainActor
final class SessionMonitor {
    /// What changed since the last look.
    enum Change: Equatable {
        case activity(isActive: Bool)
        case seatTakenByAnotherUser
    }

    /// The result of looking the process's session up at launch.
    enum Lookup {
        /// The process belongs to no session (a system service, a container): it is active.
        case outsideSession
        /// logind's records could not be read; the process is treated as active.
        case unavailable(SystemCallError)
        case session(SessionMonitor)
    }

    private let session: String
    private let seat: String?
    private let ownUser: uid_t
    private(set) var isActive: Bool
    private var seatUser: uid_t?
    private var monitor: OpaquePointer?
    private var source: (any DispatchSourceRead)?

    private init(session: String, seat: String?, ownUser: uid_t, isActive: Bool) {
        self.session = session
        self.seat = seat
        self.ownUser = ownUser
        self.isActive = isActive
        self.seatUser = seat.flatMap(Self.activeUser(ofSeat:))
    }

    /// Finds the calling process's session and its current state.
    static func lookUp() -> Lookup {
        var sessionPointer: UnsafeMutablePointer<CChar>?
        let found = sd_pid_get_session(0, &sessionPointer)
        guard found >= 0, let sessionPointer else {
            // ENODATA: the cgroup is not a session scope.
            return found == -ENODATA || found == -ENXIO
                ? .outsideSession : .unavailable(SystemCallError(call: "sd_pid_get_session", negativeErrno: found))
        }
        let session = String(cString: sessionPointer)
        free(sessionPointer)

        let active = sd_session_is_active(session)
        guard active >= 0 else {
            return .unavailable(SystemCallError(call: "sd_session_is_active(\(session))", negativeErrno: active))
        }
        var user: uid_t = 0
        let userResult = sd_session_get_uid(session, &user)
        guard userResult >= 0 else {
            return .unavailable(SystemCallError(call: "sd_session_get_uid(\(session))", negativeErrno: userResult))
        }
        var seatPointer: UnsafeMutablePointer<CChar>?
        var seat: String?
        if sd_session_get_seat(session, &seatPointer) >= 0, let seatPointer {
            seat = String(cString: seatPointer)
            free(seatPointer)
        }
        return .session(SessionMonitor(session: session, seat: seat, ownUser: user, isActive: active > 0))
    }

    /// Starts watching; `onChange` runs on the main actor for each change.
    func start(onChange: @escaping @MainActor (Change) -> Void) throws(SystemCallError) {
        var monitor: OpaquePointer?
        let created = sd_login_monitor_new(nil, &monitor)
        guard created >= 0, let monitor else {
            throw SystemCallError(call: "sd_login_monitor_new", negativeErrno: created)
        }
        let descriptor = sd_login_monitor_get_fd(monitor)
        guard descriptor >= 0 else {
            sd_login_monitor_unref(monitor)
            throw SystemCallError(call: "sd_login_monitor_get_fd", negativeErrno: descriptor)
        }
        self.monitor = monitor
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: .main)
        source.setEventHandler { [weak self] in
            MainActor.assumeIsolated {
                guard let self else { return }
                for change in self.refresh() { onChange(change) }
            }
        }
        source.resume()
        self.source = source
    }

    /// Consumes the wake-up and compares logind's records with what was known.
    private func refresh() -> [Change] {
        if let monitor { sd_login_monitor_flush(monitor) }
        var changes: [Change] = []
        let active = sd_session_is_active(session)
        // A vanished session (logout, logind restart) keeps the last known state.
        if active >= 0, (active > 0) != isActive {
            isActive = active > 0
            changes.append(.activity(isActive: isActive))
        }
        if let seat {
            let user = Self.activeUser(ofSeat: seat)
            if let user, user != seatUser, user != ownUser {
                changes.append(.seatTakenByAnotherUser)
            }
            seatUser = user
        }
        return changes
    }

    private static func activeUser(ofSeat seat: String) -> uid_t? {
        var user: uid_t = 0
        return sd_seat_get_active(seat, nil, &user) >= 0 ? user : nil
    }
}
