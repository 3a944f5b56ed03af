import JSONCore
import ProctorPolicy
import ProctorStore
import Varlink

/// The Admin methods that do more than one thing.
extension Daemon {
    /// A policy pushed over the socket, checked exactly as a file would be. Its problems
    /// carry no line and column: the document has no file the admin could open.
    static func parsePushedPolicy(_ document: JSONValue) -> Result<Policy, PolicyProblems> {
        do {
            let policy = try Policy.parse(document.serialized(), source: nil)
            if let problem = Policy.bundleSizeProblem(canonicalSize: policy.canonicalBytes.count, source: nil) {
                return .failure(PolicyProblems([problem]))
            }
            return .success(policy)
        } catch {
            return .failure(PolicyProblems(error.problems.map { problem in
                var problem = problem
                problem.location = nil
                return problem
            }))
        }
    }

    func status() -> [String: JSONValue] {
        let uptime = Double(Clock.monotonicMicroseconds() - startedMonotonic) / 1_000_000
        let appsKnown = (try? knownAppIDs().count) ?? active.compiled.policy.apps.count
        var fields: [String: JSONValue] = [
            "version": .string(Self.version),
            "startedAt": .string(Clock.rfc3339(startedAt)),
            "uptimeSeconds": .number(uptime),
            "policy": active.info,
            "counts": [
                "appsKnown": .number(appsKnown),
                "appsConnected": .number(sessionsByApp.count),
                "sessions": .number(sessionCount),
                "decisionsAllowed": .number(decisionsAllowed),
                "decisionsDenied": .number(decisionsDenied),
                "logMessagesDropped": .number(logger.droppedCount),
            ],
        ]
        if let lastReload { fields["lastReload"] = lastReload.json }
        return fields
    }

    /// Apps named in policy or ever seen registering, sorted.
    func knownAppIDs() throws(VarlinkError) -> [AppID] {
        let seen: [String]
        do { seen = try store.knownApps() } catch { throw adminError(for: error, while: "listing apps") }
        return Set(active.compiled.policy.apps.keys).union(seen).sorted()
    }

    func appSummary(_ appID: AppID) -> JSONValue {
        let inventory = try? store.app(appID: appID)
        var fields: [String: JSONValue] = [
            "appId": .string(appID),
            "inPolicy": .bool(active.compiled.appPolicy(appID) != nil),
            "connectedSessions": .number(sessionsByApp[appID]?.count ?? 0),
        ]
        if let state = active.compiled.appPolicy(appID)?.state { fields["state"] = .string(state.rawValue) }
        if let registration = inventory?.registration {
            fields["lastSeen"] = .string(Clock.rfc3339(registration.at))
            if let version = registration.appVersion { fields["version"] = .string(version) }
        }
        return .object(fields)
    }

    func appDetail(_ appID: AppID) throws(VarlinkError) -> JSONValue {
        let inventory: AppInventory?
        do { inventory = try store.app(appID: appID) } catch { throw adminError(for: error, while: "reading app \(appID)") }
        let view = AppView(of: appID, in: active.compiled)
        guard view != nil || inventory != nil else { throw AdminError.unknownApp(appID) }
        var fields: [String: JSONValue] = [
            "appId": .string(appID),
            "inPolicy": .bool(view != nil),
            "config": .object(view?.config ?? [:]),
            "dlp": view?.dlp ?? [:],
            "compliance": view?.compliance ?? [:],
            "sessions": .array((sessionsByApp[appID]?.values.sorted { $0.registeredAt < $1.registeredAt } ?? []).map { session in
                ["id": .string(session.id), "pid": .number(Int(session.peer.pid)), "uid": .number(Int(session.peer.uid)),
                 "executable": .string(session.peer.executable ?? ""), "registeredAt": .string(Clock.rfc3339(session.registeredAt)),
                 "subscribed": .bool(session.subscription != nil)]
            }),
            "feedback": .array(inventory?.feedback.map { feedback in
                ["key": .string(feedback.key), "severity": .string(feedback.severity.rawValue), "message": .string(feedback.message),
                 "data": feedback.data.flatMap { try? JSONParser.parse($0) } ?? .null, "at": .string(Clock.rfc3339(feedback.at))]
            } ?? []),
            "acknowledgements": .array(inventory?.acknowledgements.map { ack in
                ["policyVersion": .string(ack.policyVersion), "status": .string(ack.status.rawValue), "at": .string(Clock.rfc3339(ack.at))]
            } ?? []),
            "wipes": .array(inventory?.wipes.map { wipe in
                var record: [String: JSONValue] = [
                    "id": .string(wipe.id), "issuedAt": .string(Clock.rfc3339(wipe.issuedAt)),
                    "issuedByUid": .number(Int(wipe.issuedByUID)), "state": .string(wipe.state.rawValue),
                ]
                if let at = wipe.deliveredAt { record["deliveredAt"] = .string(Clock.rfc3339(at)) }
                if let at = wipe.completedAt { record["completedAt"] = .string(Clock.rfc3339(at)) }
                return .object(record)
            } ?? []),
        ]
        if let view { fields["state"] = .string(view.state.rawValue) }
        if let registration = inventory?.registration {
            var record: [String: JSONValue] = ["at": .string(Clock.rfc3339(registration.at)),
                                               "pid": .number(Int(registration.pid)), "uid": .number(Int(registration.uid))]
            if let version = registration.appVersion { record["version"] = .string(version) }
            fields["lastRegistration"] = .object(record)
        }
        if let event = inventory?.lastEvent {
            fields["lastEvent"] = ["event": .string(event.event), "at": .string(Clock.rfc3339(event.at))]
        }
        return .object(fields)
    }

    /// Validate, persist (one transaction, fsynced), then swap and broadcast: an apply that
    /// was acknowledged survives any crash, and a failed one changes nothing.
    func applyPolicy(_ call: VarlinkCall, _ context: ConnectionContext, _ reply: VarlinkReplyHandle) throws(VarlinkError) {
        if let expected = call.parameters["expectedVersion"]?.stringValue, expected != active.version {
            throw AdminError.versionConflict(expected: expected, current: active.version)
        }
        let policy: Policy
        switch Self.parsePushedPolicy(call.parameters["policy"] ?? [:]) {
        case .success(let parsed): policy = parsed
        case .failure(let error): throw AdminError.invalidPolicy(error.problems)
        }
        let record: BundleRecord
        do {
            record = try store.apply(version: policy.version, canonicalJSON: String(decoding: policy.canonicalBytes, as: UTF8.self),
                                     expectedVersion: nil, at: Clock.now(), byUID: context.peer.uid)
        } catch {
            throw adminError(for: error, while: "applying policy \(policy.version)")
        }
        bundle = (policy, record)
        activate(ActivePolicy(directory: directory, bundle: policy, bundleVersion: record.version, loadedAt: Clock.now()))
        log(.policyApplied, "Applied policy \(policy.version) pushed by uid \(context.peer.uid)",
            policyFields() + peerFields(context.peer))
        reply.reply(["version": .string(active.version), "sha256": .string(active.sha256)])
    }

    /// Makes a stored bundle the one in force (rollback).
    func activateBundle(_ record: BundleRecord, by peer: PeerIdentity, verb: String) throws(VarlinkError) {
        let policy: Policy
        do {
            policy = try Policy.parse(Array(record.canonicalJSON.utf8), source: "applied bundle \(record.version)")
        } catch {
            throw AdminError.invalidPolicy(error.problems)
        }
        bundle = (policy, record)
        activate(ActivePolicy(directory: directory, bundle: policy, bundleVersion: record.version, loadedAt: Clock.now()))
        log(.policyApplied, "\(verb) policy \(record.version) by uid \(peer.uid)", policyFields() + peerFields(peer))
    }

    func explainDecision(_ call: VarlinkCall, _ reply: VarlinkReplyHandle) throws(VarlinkError) {
        let appID = call.parameters["appId"]?.stringValue ?? ""
        let action = try action(of: call)
        var appVersion: SemanticVersion?
        if let text = call.parameters["appVersion"]?.stringValue {
            guard let version = SemanticVersion(text) else {
                throw AdminError.invalidParameter("appVersion", "\"\(text.prefix(64))\" is not a semantic version such as 2.3.0")
            }
            appVersion = version
        }
        let request = DecisionRequest(app: appID, action: action, target: call.parameters["target"]?.stringValue,
                                      size: call.parameters["size"]?.intValue, appVersion: appVersion)
        let decision = active.compiled.decide(request)
        var explanation: [JSONValue] = []
        if let entry = active.compiled.appPolicy(appID) {
            explanation.append(.string("\(appID) is in policy \(active.version) with state \(entry.state.rawValue)"))
        } else {
            explanation.append(.string("\(appID) is not in policy \(active.version): it is unmanaged"))
        }
        let origin = decision.rule.hasPrefix("builtin.") ? "a built-in default (neither the app nor defaults set it)"
            : decision.rule.hasPrefix("defaults.") ? "the policy's defaults (the app does not set it)"
            : "the app's own entry"
        explanation.append(.string("the deciding rule \(decision.rule) comes from \(origin)"))
        explanation.append(.string(decision.reason))
        if let violation = decision.violation {
            explanation.append(.string("compliance violation: onViolation is \(violation.rawValue)"))
        }
        reply.reply(["allowed": .bool(decision.allowed), "rule": .string(decision.rule), "reason": .string(decision.reason),
                     "explanation": .array(explanation)])
    }

    func wipe(_ call: VarlinkCall, _ context: ConnectionContext, _ reply: VarlinkReplyHandle) throws(VarlinkError) {
        let appID = call.parameters["appId"]?.stringValue ?? ""
        guard active.compiled.appPolicy(appID) != nil || ((try? store.knownApps().contains(appID)) ?? false) else {
            throw AdminError.unknownApp(appID)
        }
        let directive: WipeDirective
        do {
            directive = try store.issueWipe(appID: appID, issuedAt: Clock.now(), byUID: context.peer.uid)
        } catch {
            throw adminError(for: error, while: "recording a wipe of \(appID)")
        }
        appsWithPendingWipes.insert(appID)
        var deliveredTo = 0
        for session in sessionsByApp[appID]?.values ?? [:].values where session.subscription?.isConnected == true {
            sendUpdate(to: session, reason: "wipe", view: AppView(of: appID, in: active.compiled))
            deliveredTo += 1
        }
        log(.wipeIssued, "Wipe \(directive.id) issued for \(appID) by uid \(context.peer.uid); delivered to \(deliveredTo) session(s)",
            [(DaemonEventField.appID, appID), ("DIRECTIVE_ID", directive.id)] + peerFields(context.peer))
        events.emit(kind: "wipe", appID: appID, data: ["directiveId": .string(directive.id), "deliveredTo": .number(deliveredTo)])
        reply.reply(["directiveId": .string(directive.id), "deliveredTo": .number(deliveredTo)])
    }

    func adminError(for error: StoreError, while what: String) -> VarlinkError {
        switch error {
        case .versionConflict(let expected, let current):
            return AdminError.versionConflict(expected: expected, current: current ?? "")
        case .unknownVersion(let version):
            return AdminError.unknownVersion(version)
        default:
            logStorageFailure(what, error)
            return AdminError.storageFailure("\(what): \(error)")
        }
    }
}

/// The errors of `io.proctor.Admin`.
enum AdminError {
    static func versionConflict(expected: String, current: String) -> VarlinkError {
        VarlinkError(name: "io.proctor.Admin.VersionConflict", parameters: ["expected": .string(expected), "current": .string(current)])
    }
    static func invalidPolicy(_ problems: [PolicyProblem]) -> VarlinkError {
        VarlinkError(name: "io.proctor.Admin.InvalidPolicy", parameters: ["problems": .array(problems.map(\.adminJSON))])
    }
    static func unknownApp(_ appID: String) -> VarlinkError {
        VarlinkError(name: "io.proctor.Admin.UnknownApp", parameters: ["appId": .string(appID)])
    }
    static func unknownVersion(_ version: String) -> VarlinkError {
        VarlinkError(name: "io.proctor.Admin.UnknownVersion", parameters: ["version": .string(version)])
    }
    static func invalidParameter(_ parameter: String, _ reason: String) -> VarlinkError {
        VarlinkError(name: "io.proctor.Admin.InvalidParameter", parameters: ["parameter": .string(parameter), "reason": .string(reason)])
    }
    static func storageFailure(_ message: String) -> VarlinkError {
        VarlinkError(name: "io.proctor.Admin.StorageFailure", parameters: ["message": .string(message)])
    }
}
