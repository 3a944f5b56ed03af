import Dispatch
import Foundation
import Glibc
import ProctorProtocol

/// Launching and running without proctord (issue #12 §2): the last view proctord signed for
/// this app (`OfflineViewCache`) stands in for a registration while it is younger than
/// `compliance.offlineGraceSeconds`; past `compliance.offlineWipeSeconds` without proctord the
/// managed data is wiped (cause `.offline`); otherwise the process ends with
/// `ApplicationExitStatus.agentUnavailable`. Both timers count from when proctord signed the
/// view, so a replayed older view only expires sooner.
extension PolicyApplication {
    /// The launch when proctord could not be reached (`unreachable` says how).
    func launchOffline(_ settings: PolicyAppSettings, unreachable: String) -> LaunchDecision {
        guard let viewCache else {
            return agentUnavailable("\(unreachable); no offline view is kept without a state or home folder, "
                + "or for an agent that is not on a Varlink socket")
        }
        let verified: OfflineViewCache.Verified
        do {
            verified = try viewCache.load(appID: settings.appID, uid: geteuid(), now: Int64(Date().timeIntervalSince1970 * 1000))
        } catch {
            return agentUnavailable("\(unreachable); cannot launch offline: \(error)")
        }
        let update = AgentUpdate(offline: verified.payload, managedApps: verified.managedApps)
        let age = verified.ageSeconds
        if let wipeAfter = update.offlineWipeSeconds, age >= wipeAfter {
            wipe(WipeDirective(id: nil, issuedAt: nil, cause: .offline), settings: settings)
            viewCache.remove()
            return agentUnavailable("\(unreachable); offline for \(age) s since proctord's last view, past "
                + "compliance.offlineWipeSeconds (\(wipeAfter) s): the managed data was wiped")
        }
        guard age <= update.offlineGraceSeconds else {
            return agentUnavailable("\(unreachable); its last view from proctord is \(age) s old, past "
                + "compliance.offlineGraceSeconds (\(update.offlineGraceSeconds) s)")
        }

        apply(update)
        if let refusal = admit(update, settings: settings) { return refusal }
        dataGuard.connectionLost(at: .now - .seconds(age))
        // The data key comes from the kernel keyring's copy until proctord answers.
        configureProtectedStorage(settings, dataKey: nil, offlineGraceSeconds: update.offlineGraceSeconds)
        // As online: last before the delegate's code runs, so none of it runs unconfined.
        enforceExportRule(update, settings: settings)
        launchedOffline = true
        connectivityEpoch += 1
        scheduleOfflineWipe(afterSeconds: update.offlineWipeSeconds.map { $0 - age })
        report(Diagnostic(message: "\(unreachable); launching offline from the view proctord signed at "
            + "\(verified.payload.issuedAt) (\(age) s ago) and reconnecting"))
        return .proceed
    }

    private func agentUnavailable(_ reason: String) -> LaunchDecision {
        .refuse(reason: reason, exitStatus: .agentUnavailable)
    }

    /// After `seconds` (nil: never) still without proctord, wipes the managed data and ends
    /// with `agentUnavailable`; a later connectivity change cancels it.
    func scheduleOfflineWipe(afterSeconds seconds: Int?) {
        guard let seconds else { return }
        let epoch = connectivityEpoch
        DispatchQueue.main.asyncAfter(deadline: .now() + .seconds(max(0, seconds))) {
            MainActor.assumeIsolated {
                guard let application = PolicyApplication.running, application.connectivityEpoch == epoch else { return }
                application.wipeForBeingOffline(seconds: application.offlineTimers.wipeSeconds ?? seconds)
            }
        }
    }

    private func wipeForBeingOffline(seconds: Int) -> Never {
        if let settings { wipe(WipeDirective(id: nil, issuedAt: nil, cause: .offline), settings: settings) }
        viewCache?.remove()
        exit("proctord could not be reached for longer than compliance.offlineWipeSeconds (\(seconds) s): "
             + "the managed data was wiped", status: .agentUnavailable)
    }

    /// proctord answers again: an app launched offline gets its data key from it (the keyring's
    /// copy expires with the grace).
    func restoredAfterOfflineLaunch() {
        guard launchedOffline else { return }
        launchedOffline = false
        if policyState == .authorized { fetchNextDataKey(offlineGraceSeconds: offlineTimers.graceSeconds) }
    }
}
