import JSONCore
import ProctorPolicy
import ProctorProtocol
import ProctorStore
import Varlink

/// `io.proctor.Admin`: what administrators and MDM connectors call. Every call is checked
/// again (root or the admin group), whatever the socket's file mode, before anything else
/// — its parameters included — is looked at (`admitAdministrators`, the interface's admission).
extension Daemon {
    static func admitAdministrators(_ context: ConnectionContext) throws(VarlinkError) {
        guard context.mayAdminister else { throw VarlinkError.permissionDenied }
    }

    func adminMethods() -> [String: VarlinkMethod<ConnectionContext>] {
        var table = MethodTable<ConnectionContext>()
        table.answer(Admin.Status.self) { [unowned self] _, _ in status() }
        table.answer(Admin.ListApps.self) { [unowned self] _, _ throws(VarlinkError) in
            Admin.ListApps.Reply(apps: try knownAppIDs().map(appSummary))
        }
        table.answer(Admin.GetApp.self) { [unowned self] request, _ throws(VarlinkError) in
            Admin.GetApp.Reply(app: try appDetail(request.appId))
        }
        table.answerLater(Admin.GetPolicy.self) { [unowned self] _, _, reply in
            // The policy is rebuilt from its compiled form and rendered on a worker: for
            // 100 000 apps that is tens of milliseconds no other client should wait for.
            let (compiled, info) = (active.compiled, active.info)
            offLoop({ compiled.policy.canonicalJSON.objectValue ?? [:] }) { policy in
                reply(.success(Admin.GetPolicy.Reply(policy: policy, info: info)))
            }
        }
        table.answer(Admin.ValidatePolicy.self) { request, _ in
            let problems: [PolicyProblem]
            switch Self.parsePushedPolicy(.object(request.policy)) {
            case .success: problems = []
            case .failure(let error): problems = error.problems
            }
            return Admin.ValidatePolicy.Reply(valid: problems.isEmpty, problems: problems.map(Admin.Problem.init))
        }
        table.answerLater(Admin.ApplyPolicy.self) { [unowned self] request, context, reply in
            applyPolicy(request, context, reply: reply)
        }
        table.answerLater(Admin.Reload.self) { [unowned self] _, _, reply in
            reload { [unowned self] outcome in reply(.success(Admin.Reload.Reply(result: outcome.result, policy: active.info))) }
        }
        table.answer(Admin.Decide.self) { [unowned self] request, _ in explainDecision(request) }
        table.answer(Admin.Wipe.self) { [unowned self] request, context throws(VarlinkError) in
            try wipe(request.appId, context)
        }
        table.answer(Admin.Notify.self) { [unowned self] request, context throws(VarlinkError) in try notify(request, context) }
        table.answer(Admin.PolicyHistory.self) { [unowned self] _, _ throws(VarlinkError) in
            let history: [BundleRecord]
            do throws(StoreError) { history = try store.history() } catch { throw adminError(for: error, while: "reading policy history") }
            return Admin.PolicyHistory.Reply(entries: history.enumerated().map { index, record in
                Admin.HistoryEntry(version: record.version, sha256: record.sha256, appliedAt: Clock.rfc3339(record.appliedAt),
                                   appliedByUid: Int(record.appliedByUID), kind: Admin.HistoryEntry.Kind(record.kind),
                                   current: index == 0)
            })
        }
        table.answerLater(Admin.ApplyBundle.self) { [unowned self] request, context, reply in
            applyBundle(request, context, reply: reply)
        }
        table.answerLater(Admin.RollbackPolicy.self) { [unowned self] request, context, reply in
            do throws(VarlinkError) { try refuseUnsignedIfRequired(context, rollback: true) } catch { return reply(.failure(error)) }
            // In turn with reloads and applies, so none of them swaps in a policy built on
            // the bundle this replaces.
            submit(.change { [unowned self] finished in
                rollBack(to: request.version, context) { result in
                    reply(result)
                    finished()
                }
            })
        }
        table.stream(Admin.Events.self) { [unowned self] request, _, reply throws(VarlinkError) in
            // The replay and the subscription happen in this one loop turn: no event between them.
            let replay = try request.after.map { after throws(VarlinkError) in
                try recordedEvents(matching: EventQuery(appID: request.filter?.appId, kinds: request.filter?.kinds,
                                                        afterID: Int64(after)),
                                   limit: Admin.EventHistory.maxLimit)
            } ?? []
            guard events.add(appID: request.filter?.appId, kinds: request.filter?.kinds.map(Set.init), handle: reply,
                             replay: replay) else {
                throw AdminError.invalidParameter("filter", "at most \(events.maxSubscribers) event streams may be open")
            }
        }
        table.answer(Admin.EventHistory.self) { [unowned self] request, _ throws(VarlinkError) in try eventHistory(request) }
        return table.methods
    }
}
