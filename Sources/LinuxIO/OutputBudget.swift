/// A bound on the output that many connections together may hold for peers that do not
/// read it. Each connection's own `Limits.maxOutputBuffer` stops one client; this stops many
/// clients of the same kind (each pipelining calls and never reading) from growing the
/// process without bound.
///
/// When the total passes `limit`, the connection holding the most unread output — the one
/// furthest behind — is closed (`.outputBudgetExceeded`), then the next, until the total fits.
/// Peers that read their replies hold little or nothing and are never the ones cut.
/// Use it from the loop's thread, like the connections sharing it.
public final class OutputBudget {
    /// Most bytes of pending output across all connections sharing the budget.
    public let limit: Int
    /// Bytes pending now, across the connections.
    public private(set) var total = 0
    /// Connections closed because the budget was exceeded, since it was made.
    public private(set) var connectionsCut = 0

    /// The connections with output pending, and how much each holds.
    private var pending: [ObjectIdentifier: (connection: Unmanaged<StreamConnection>, bytes: Int)] = [:]
    private var isEnforcing = false

    public init(limit: Int) {
        precondition(limit > 0, "an output budget must be positive")
        self.limit = limit
    }

    /// Called by a connection whenever its pending output changes (0 when it closes).
    func update(_ connection: StreamConnection, pendingOutput bytes: Int) {
        let key = ObjectIdentifier(connection)
        let previous = pending[key]?.bytes ?? 0
        total += bytes - previous
        // Unmanaged: a closing connection reports 0 and leaves before it is deallocated.
        pending[key] = bytes > 0 ? (.passUnretained(connection), bytes) : nil
        enforce()
    }

    private func enforce() {
        guard total > limit, !isEnforcing else { return }
        isEnforcing = true
        defer { isEnforcing = false }
        while total > limit, let largest = pending.max(by: { $0.value.bytes < $1.value.bytes }) {
            connectionsCut += 1
            let connection = largest.value.connection.takeUnretainedValue()
            connection.close(reason: .outputBudgetExceeded)
            // A connection that was already closing reports nothing more: forget it anyway.
            if let stale = pending.removeValue(forKey: largest.key) { total -= stale.bytes }
        }
    }
}
