@testable import ProctorDaemon
import Testing

@Suite struct PolicyUpdateQueueTests {
    @Test func theFirstUpdateStartsAtOnceAndTheRestWait() {
        var queue = PolicyUpdateQueue()
        #expect(queue.submit(.change { _ in }) != nil)
        #expect(queue.submit(.change { _ in }) == nil)
        #expect(queue.waitingCount == 1)
        #expect(queue.finish() != nil)
        #expect(queue.finish() == nil)
        #expect(!queue.isRunning)
    }

    @Test func reloadsAskedForWhileOneRunsCoalesceIntoOneThatWaits() {
        var queue = PolicyUpdateQueue()
        var told: [Int] = []
        #expect(queue.submit(.reload(waiters: [{ _ in told.append(0) }])) != nil)
        for caller in 1...3 { #expect(queue.submit(.reload(waiters: [{ _ in told.append(caller) }])) == nil) }
        #expect(queue.waitingCount == 1)
        guard case .reload(let waiters)? = queue.finish() else {
            Issue.record("the coalesced reload should start next")
            return
        }
        let outcome = ReloadOutcome(at: 0, problems: [])
        for waiter in waiters { waiter(outcome) }
        #expect(told == [1, 2, 3])
        #expect(queue.finish() == nil)
    }

    @Test func otherChangesKeepTheirOrderAndAreNotMerged() {
        var queue = PolicyUpdateQueue()
        var order: [String] = []
        _ = queue.submit(.change { _ in order.append("apply 1") })
        _ = queue.submit(.change { _ in order.append("apply 2") })
        _ = queue.submit(.reload(waiters: []))
        _ = queue.submit(.change { _ in order.append("rollback") })
        #expect(queue.waitingCount == 3)
        while let next = queue.finish() {
            switch next {
            case .reload: order.append("reload")
            case .change(let run): run {}
            }
        }
        #expect(order == ["apply 2", "reload", "rollback"])
    }
}
