import JSONCore
import ProctorPolicy
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
        func admin(requiresMore: Bool = false,
                   _ body: @escaping (VarlinkCall, ConnectionContext, VarlinkReplyHandle) throws(VarlinkError) -> Void)
            -> VarlinkMethod<ConnectionContext>
        {
            VarlinkMethod(requiresMore: requiresMore, body)
        }
        return [
            "Status": admin { [unowned self] _, _, reply in reply.reply(status()) },
            "ListApps": admin { [unowned self] _, _, reply throws(VarlinkError) in
                reply.reply(["apps": .array(try knownAppIDs().map(appSummary))])
            },
            "GetApp": admin { [unowned self] call, _, reply throws(VarlinkError) in
                let appID = call.parameters["appId"]?.stringValue ?? ""
                reply.reply(["app": try appDetail(appID)])
            },
            "GetPolicy": admin { [unowned self] _, _, reply in
                reply.reply(["policy": active.compiled.policy.canonicalJSON, "info": active.info])
            },
            "ValidatePolicy": admin { call, _, reply in
                let problems: [PolicyProblem]
                switch Self.parsePushedPolicy(call.parameters["policy"] ?? [:]) {
                case .success: problems = []
                case .failure(let error): problems = error.problems
                }
                reply.reply(["valid": .bool(problems.isEmpty), "problems": .array(problems.map(\.adminJSON))])
            },
            "ApplyPolicy": admin { [unowned self] call, context, reply throws(VarlinkError) in
                try applyPolicy(call, context, reply)
            },
            "Reload": admin { [unowned self] _, _, reply in
                let outcome = reload()
                reply.reply(["result": outcome.json, "policy": active.info])
            },
            "Decide": admin { [unowned self] call, _, reply throws(VarlinkError) in
                try explainDecision(call, reply)
            },
            "Wipe": admin { [unowned self] call, context, reply throws(VarlinkError) in
                try wipe(call, context, reply)
            },
            "Notify": admin { [unowned self] call, _, reply throws(VarlinkError) in
                let appID = call.parameters["appId"]?.stringValue ?? ""
                guard active.compiled.appPolicy(appID) != nil else { throw AdminError.unknownApp(appID) }
                let payload = call.parameters["payload"] ?? [:]
                var delivered = 0
                for session in sessionsByApp[appID]?.values ?? [:].values where session.subscription?.isConnected == true {
                    sendUpdate(to: session, reason: "notification", view: AppView(of: appID, in: active.compiled),
                               notification: payload)
                    delivered += 1
                }
                events.emit(kind: "notification", appID: appID, data: ["payload": payload, "delivered": .number(delivered)])
                reply.reply(["delivered": .number(delivered)])
            },
            "PolicyHistory": admin { [unowned self] _, _, reply throws(VarlinkError) in
                let history: [BundleRecord]
                do throws(StoreError) { history = try store.history() } catch { throw adminError(for: error, while: "reading policy history") }
                reply.reply(["entries": .array(history.enumerated().map { index, record in
                    ["version": .string(record.version), "sha256": .string(record.sha256),
                     "appliedAt": .string(Clock.rfc3339(record.appliedAt)), "appliedByUid": .number(Int(record.appliedByUID)),
                     "kind": .string(record.kind.rawValue), "current": .bool(index == 0)]
                })])
            },
            "RollbackPolicy": admin { [unowned self] call, context, reply throws(VarlinkError) in
                let version = call.parameters["version"]?.stringValue ?? ""
                let record: BundleRecord
                do throws(StoreError) {
                    record = try store.rollback(to: version, at: Clock.now(), byUID: context.peer.uid)
                } catch {
                    throw adminError(for: error, while: "rolling back to \(version)")
                }
                try activateBundle(record, by: context.peer, verb: "Rolled back to")
                reply.reply(["version": .string(active.version), "sha256": .string(active.sha256)])
            },
            "Events": admin(requiresMore: true) { [unowned self] call, _, reply throws(VarlinkError) in
                let filter = call.parameters["filter"]
                let kinds = filter?["kinds"]?.arrayValue.map { Set($0.compactMap(\.stringValue)) }
                guard events.add(appID: filter?["appId"]?.stringValue, kinds: kinds, handle: reply) else {
                    throw AdminError.invalidParameter("filter", "at most \(events.maxSubscribers) event streams may be open")
                }
            },
        ]
    }
}
