@testable import ProctorKit
import Testing

@Suite struct LifecycleStateMachineTests {
    @Test func launchInActiveSessionBecomesActive() {
        var machine = LifecycleStateMachine(sessionIsActive: true)
        #expect(machine.launchDidFinish() == [.deliver(.didBecomeActive)])
        #expect(machine.state == .active)
        #expect(machine.launchDidFinish() == [])
    }

    @Test func launchInInactiveSessionStaysInactiveUntilTheSessionActivates() {
        var machine = LifecycleStateMachine(sessionIsActive: false)
        #expect(machine.launchDidFinish() == [])
        #expect(machine.state == .inactive)
        #expect(machine.sessionActivityChanged(isActive: true) == [.deliver(.didBecomeActive)])
        #expect(machine.sessionActivityChanged(isActive: true) == [])
        #expect(machine.sessionActivityChanged(isActive: false) == [.deliver(.willResignActive)])
    }

    @Test func suspendAndResumeFollowUIKitPairs() {
        var machine = LifecycleStateMachine(sessionIsActive: true)
        _ = machine.launchDidFinish()
        #expect(machine.suspendRequested() == [.deliver(.willResignActive), .deliver(.didEnterBackground), .stopProcess])
        #expect(machine.state == .background)
        #expect(machine.resumed() == [.deliver(.willEnterForeground), .deliver(.didBecomeActive)])
        #expect(machine.state == .active)
    }

    @Test func suspendFromInactiveSkipsResignAndResumeStaysInactive() {
        var machine = LifecycleStateMachine(sessionIsActive: false)
        _ = machine.launchDidFinish()
        #expect(machine.suspendRequested() == [.deliver(.didEnterBackground), .stopProcess])
        #expect(machine.resumed() == [.deliver(.willEnterForeground)])
        #expect(machine.state == .inactive)
    }

    @Test func continueWithoutSuspendChangesNothing() {
        var machine = LifecycleStateMachine(sessionIsActive: true)
        _ = machine.launchDidFinish()
        #expect(machine.resumed() == [])
        #expect(machine.state == .active)
    }

    @Test func sessionChangesWhileInBackgroundAreFoldedIntoTheResume() {
        var machine = LifecycleStateMachine(sessionIsActive: true)
        _ = machine.launchDidFinish()
        _ = machine.suspendRequested()
        #expect(machine.sessionActivityChanged(isActive: false) == [])
        #expect(machine.resumed() == [.deliver(.willEnterForeground)])
        #expect(machine.sessionActivityChanged(isActive: true) == [.deliver(.didBecomeActive)])
    }

    @Test func repeatedSuspendStillStopsTheProcess() {
        var machine = LifecycleStateMachine(sessionIsActive: true)
        _ = machine.launchDidFinish()
        _ = machine.suspendRequested()
        #expect(machine.suspendRequested() == [.stopProcess])
    }

    @Test func eventsBeforeLaunchUpdateStateButReachNobody() {
        var machine = LifecycleStateMachine(sessionIsActive: true)
        #expect(machine.occurred(.didReceiveReload) == [])
        #expect(machine.sessionActivityChanged(isActive: false) == [])
        #expect(machine.suspendRequested() == [.stopProcess])
        #expect(machine.resumed() == [])
        #expect(machine.launchDidFinish() == [])
        #expect(machine.state == .inactive)
    }

    @Test func terminationNotifiesStoppingThenDeliversWillTerminateOnce() {
        var machine = LifecycleStateMachine(sessionIsActive: true)
        _ = machine.launchDidFinish()
        #expect(machine.terminationRequested() == [.notifyStopping, .deliver(.willTerminate), .exitCleanly])
        #expect(machine.terminationRequested() == [])
        #expect(machine.occurred(.didReceiveReload) == [])
        #expect(machine.suspendRequested() == [])
    }

    @Test func terminationBeforeLaunchSkipsTheDelegate() {
        var machine = LifecycleStateMachine(sessionIsActive: true)
        #expect(machine.terminationRequested() == [.notifyStopping, .exitCleanly])
    }

    @Test func reloadMemoryWarningAndUserChangeReachTheRunningApplication() {
        var machine = LifecycleStateMachine(sessionIsActive: true)
        _ = machine.launchDidFinish()
        for event in [LifecycleEvent.didReceiveReload, .didReceiveMemoryWarning, .userDidChange] {
            #expect(machine.occurred(event) == [.deliver(event)])
        }
        #expect(machine.state == .active)
    }
}
