/// Policy changes, run one at a time in the order they were asked for, so each is built on
/// what the one before it left in force. A change's reading and compiling run off the event
/// loop (`Daemon.offLoop`) and its result is swapped in on the loop, between two requests:
/// until then the loop answers everyone with the policy in force.
///
/// Reloads coalesce: a reload asked for while another one waits joins it (that one has not
/// read `policy.d` yet, so it reads what the new caller wants read), so however often
/// SIGHUP comes, at most one reload runs and one waits. Other changes (an applied bundle, a
/// rollback) each wait their turn; there are at most as many as Admin connections, since a
/// connection's next call waits for the reply to its last one.
struct PolicyUpdateQueue {
    enum Update {
        /// Re-read `policy.d`; each waiter is told the one outcome.
        case reload(waiters: [(ReloadOutcome) -> Void])
        /// Any other change: started on the loop, it calls `finished` when it is done.
        case change((_ finished: @escaping () -> Void) -> Void)

        var isReload: Bool {
            if case .reload = self { return true }
            return false
        }
    }

    /// An update is running (between its start and `finish()`).
    private(set) var isRunning = false
    private var waiting: [Update] = []

    /// Queues `update`, or hands it back when nothing runs: start it now.
    mutating func submit(_ update: Update) -> Update? {
        guard isRunning else {
            isRunning = true
            return update
        }
        if case .reload(let more) = update, let index = waiting.firstIndex(where: \.isReload),
           case .reload(let waiters) = waiting[index] {
            waiting[index] = .reload(waiters: waiters + more)
        } else {
            waiting.append(update)
        }
        return nil
    }

    /// The running update is done: the next one to start, if any.
    mutating func finish() -> Update? {
        precondition(isRunning, "finish() without a running update")
        guard !waiting.isEmpty else {
            isRunning = false
            return nil
        }
        return waiting.removeFirst()
    }

    /// Updates waiting for their turn.
    var waitingCount: Int { waiting.count }
}
