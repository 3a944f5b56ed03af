import LinuxIO
import ProctorPolicy

/// Policy changes, one at a time (`PolicyUpdateQueue`), read and compiled off the loop.
extension Daemon {
    /// Re-reads `policy.d` (SIGHUP, `Admin.Reload`) and tells `done` the outcome. The
    /// directory is read and compiled off the loop, which answers with the policy in force
    /// meanwhile; systemd hears `RELOADING=1` when it starts and `READY=1` when it is in.
    /// An invalid directory leaves the policy in force untouched.
    func reload(_ done: @escaping (ReloadOutcome) -> Void = { _ in }) {
        reloadFleetSettings()
        submit(.reload(waiters: [done]))
    }

    /// Runs `update` now, or after the updates before it.
    func submit(_ update: PolicyUpdateQueue.Update) {
        guard let start = policyUpdates.submit(update) else { return }
        run(start)
    }

    private func run(_ update: PolicyUpdateQueue.Update) {
        let finished = { [unowned self] in
            if let next = policyUpdates.finish() { run(next) }
        }
        switch update {
        case .reload(let waiters):
            startReload { outcome in
                for waiter in waiters { waiter(outcome) }
                finished()
            }
        case .change(let start):
            start(finished)
        }
    }

    private func startReload(_ done: @escaping (ReloadOutcome) -> Void) {
        notify { try $0.reloading(status: "Reloading policy.d") }
        let now = Clock.now()
        let path = configuration.policyDirectory
        let bundlePolicy = bundle?.policy, bundleVersion = bundle?.record.version
        // Updates run one at a time: this is still the directory in force when the result is
        // swapped in, and the policy in force is still the one compiled from it and the bundle.
        let previous = directory, inForce = active
        offLoop({ () -> Result<(PolicyDirectoryIdentity, ActivePolicy), PolicyProblems> in
            do throws(PolicyProblems) {
                let (loaded, identity) = try PolicyDirectory.loadIdentified(path)
                // policy.d as it was (a SIGHUP after no edit, or after one that merges to the same
                // policy): nothing to compile or hash.
                if let previous, previous.compiled.isCompiled(from: loaded.policy) {
                    return .success((identity, inForce.reread(from: loaded, bundleVersion: bundleVersion, at: now)))
                }
                if let problem = Self.reusedVersionProblem(loaded, previous: previous) { throw PolicyProblems([problem]) }
                return .success((identity, ActivePolicy(directory: .loaded(loaded), bundle: bundlePolicy, bundleVersion: bundleVersion,
                                                        loadedAt: now)))
            } catch {
                return .failure(error)
            }
        }) { [unowned self] result in
            let outcome: ReloadOutcome
            switch result {
            case .success(let (identity, policy)):
                let replaced = active
                directoryIdentity = identity
                outcome = ReloadOutcome(at: now, problems: [])
                activate(policy)
                releaseOffLoop(replaced)
                log(.reloadSucceeded, "Reloaded policy.d: policy \(active.version) in force", policyFields())
            case .failure(let error):
                outcome = ReloadOutcome(at: now, problems: error.problems)
                logReloadFailure(outcome)
            }
            lastReload = outcome
            notify { try $0.ready(status: statusLine()) }
            done(outcome)
        }
    }

    /// Runs `work` on a worker thread, then `then` with its result on the loop's thread: for
    /// reading and compiling policies, which take seconds for 100 000 apps.
    /// With `runsPolicyWorkInline`, `work` runs at once on this thread and `then` on the
    /// loop's next turn, as it would after a worker.
    ///
    /// The worker runs at `workerNice`: with two CPUs, a reload's threads (parsing, then
    /// compiling beside hashing) kept both busy, and the loop, woken by a client, waited for a
    /// scheduler slice (milliseconds) before it could answer; at a lower priority they give
    /// the CPU up to it at once. `queue` keeps the order of work that must keep it; other work
    /// goes to the shared pool.
    func offLoop<Value: Sendable>(on queue: SerialWorkQueue? = nil, _ work: @escaping @Sendable () -> Value,
                                  then: @escaping (Value) -> Void) {
        let loop = self.loop
        let then = LoopBound(then)
        if runsPolicyWorkInline {
            let value = work()
            return loop.execute { then.value(value) }
        }
        let job: @Sendable () -> Void = {
            let value = work()
            loop.execute { then.value(value) }
        }
        if let queue {
            queue.run(niceAtLeast: Self.workerNice, job)
        } else {
            WorkerPool.shared.run(niceAtLeast: Self.workerNice, job)
        }
    }
}

extension Daemon {
    /// The `nice` of the workers (`WorkerPool`) that read, compile and free policies once proctord
    /// serves (they keep it: raising it again needs `CAP_SYS_NICE`, which proctord does not have).
    static let workerNice: Int32 = 10

    /// Hands the last reference to `value` (a policy just replaced) to a worker thread,
    /// which frees it: freeing the parsed and compiled forms of 100 000 apps takes tens of
    /// milliseconds that no client should wait for. The caller's own reference ends with
    /// this call, microseconds before a worker can pick the closure up. The worker then gives
    /// the freed pages (and those of the reading that made the new policy) back to the kernel.
    func releaseOffLoop<Value: Sendable>(_ value: consuming Value) {
        guard !runsPolicyWorkInline else { return }
        let last = consume value
        WorkerPool.shared.run(niceAtLeast: Self.workerNice) {
            withExtendedLifetime(last) {}
            Heap.returnFreePagesToKernel()
        }
    }
}

/// A value made on the loop's thread and used only there, carried through a worker thread
/// that never touches it (`Daemon.offLoop`), hence unchecked.
private struct LoopBound<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
