import Foundation
import ProctorKit
import Testing
import TestSupport

/// Real signals to a child process running the test app; its delegate logs each call.
/// None of this needs logind: without a session the application is active from launch.
@Suite struct LifecycleTests {
    @Test func launchOrderIsDidFinishLaunchingThenDidBecomeActive() throws {
        let app = try TestApp.launch()
        let lines = try app.waitForOutputLines(count: 2)
        #expect(lines == [TestApp.launchLine("ProctorKit.Application"), "delegate didBecomeActive"])
        #expect(try app.terminate() == 0)
    }

    @Test func jobControlStopsAndContinuesTheProcess() throws {
        let app = try TestApp.launch()
        try app.waitForOutputLine("delegate didBecomeActive")

        try app.send(SIGTSTP)
        try app.waitForOutputLine("delegate didEnterBackground")
        try app.waitForSchedulerState("T")

        try app.send(SIGCONT)
        let lines = try app.waitForOutputLines(count: 6)
        #expect(Array(lines[2...]) == [
            "delegate willResignActive", "delegate didEnterBackground",
            "delegate willEnterForeground", "delegate didBecomeActive",
        ])
        #expect(try app.schedulerState() != "T")

        #expect(try app.terminate() == 0)
    }

    @Test func continueWithoutStopDeliversNothing() throws {
        let app = try TestApp.launch()
        try app.waitForOutputLine("delegate didBecomeActive")
        try app.send(SIGCONT)
        try app.send(SIGHUP)
        let lines = try app.waitForOutputLines(count: 3)
        #expect(lines[2] == "delegate didReceiveReload")
        try app.terminate()
        #expect(!app.output.contains("willEnterForeground"))
    }

    @Test func hangupDeliversReload() throws {
        let app = try TestApp.launch()
        try app.waitForOutputLine("delegate didBecomeActive")
        try app.send(SIGHUP)
        try app.waitForOutputLine("delegate didReceiveReload")
        try app.send(SIGHUP)
        try app.waitForOutputLines(count: 4)
        #expect(try app.terminate() == 0)
        #expect(app.outputLines.filter { $0 == "delegate didReceiveReload" }.count == 2)
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func terminationDeliversWillTerminateThenExitsCleanly(signal: Int32) throws {
        let app = try TestApp.launch()
        try app.waitForOutputLine("delegate didBecomeActive")
        try app.send(signal)
        #expect(try app.waitForExit() == 0)
        #expect(app.outputLines.last == "delegate willTerminate")
    }

    @Test func subclassSeesEveryEventBeforeTheDelegate() throws {
        let app = try TestApp.launch(principal: "RecordingApplication")
        try app.waitForOutputLine("delegate didBecomeActive")
        try app.send(SIGHUP)
        try app.waitForOutputLine("delegate didReceiveReload")
        #expect(try app.terminate() == 0)
        #expect(app.outputLines == [
            "application prepareLaunch",
            TestApp.launchLine("proctor_kit_testapp.RecordingApplication"),
            "application didBecomeActive", "delegate didBecomeActive",
            "application didReceiveReload", "delegate didReceiveReload",
            "application willTerminate", "delegate willTerminate",
        ])
    }

    @Test func refusedLaunchNeverReachesTheDelegate() throws {
        let app = try TestApp.launch(principal: "RefusingApplication")
        #expect(try app.waitForExit() == ApplicationExitStatus.launchRefused.rawValue)
        #expect(app.output.isEmpty)
        #expect(app.errorOutput.contains("launch refused: refused by the test application"))
    }

    @Test func systemdHearsReadyAndStopping() throws {
        let directory = try TemporaryDirectory()
        let listener = try NotifySocketListener(path: directory.appending("notify").path)
        let app = try TestApp.launch(environment: ["NOTIFY_SOCKET": listener.path])
        try listener.waitFor("READY=1")
        try app.waitForOutputLine("delegate didBecomeActive")
        #expect(try app.terminate() == 0)
        let assignments = try listener.waitFor("STOPPING=1")
        #expect(assignments == ["READY=1", "STOPPING=1"])
        // From the app's own process, which systemd requires of a Type=notify service (NotifyAccess=main).
        #expect(listener.sender(of: "READY=1") == app.pid)
        #expect(listener.sender(of: "STOPPING=1") == app.pid)
    }

    @Test func readyIsSentOnlyAfterDidFinishLaunchingReturnsTrue() throws {
        let directory = try TemporaryDirectory()
        let listener = try NotifySocketListener(path: directory.appending("notify").path)
        let app = try TestApp.launch(environment: ["NOTIFY_SOCKET": listener.path, "TESTAPP_DECLINE_LAUNCH": "1"])
        #expect(try app.waitForExit() == ApplicationExitStatus.launchDeclined.rawValue)
        #expect(app.errorOutput.contains("launch declined: application(_:didFinishLaunchingWithOptions:) returned false"))
        #expect(try listener.waitFor("STOPPING=1") == ["STOPPING=1"])
    }

    @Test func watchdogIsPingedAtHalfTheInterval() throws {
        let directory = try TemporaryDirectory()
        let listener = try NotifySocketListener(path: directory.appending("notify").path)
        let app = try TestApp.launch(environment: ["NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": "200000"])
        let start = ContinuousClock.now
        try listener.waitFor("READY=1")
        try listener.waitFor("WATCHDOG=1", timeout: .seconds(5))
        #expect(ContinuousClock.now - start >= .milliseconds(90))
        #expect(try app.terminate() == 0)
    }

    @Test func noWatchdogPingsWithoutWatchdogUSec() throws {
        let directory = try TemporaryDirectory()
        let listener = try NotifySocketListener(path: directory.appending("notify").path)
        let app = try TestApp.launch(environment: ["NOTIFY_SOCKET": listener.path])
        try listener.waitFor("READY=1")
        try app.waitForOutputLine("delegate didBecomeActive")
        try app.terminate()
        #expect(!(try listener.waitFor("STOPPING=1")).contains("WATCHDOG=1"))
    }

    @Test func missingLogindAndPSIAreReportedNotFatal() throws {
        let app = try TestApp.launch()
        try app.waitForOutputLine("delegate didBecomeActive")
        #expect(try app.terminate() == 0)
        // Whatever this machine lacks is said at most once per source, on standard error.
        for source in ["memory pressure (PSI) unavailable", "login session state unavailable"] {
            #expect(app.errorOutput.components(separatedBy: source).count <= 2)
        }
    }
}

/// Regressions and the application's view of its Info.plist.
@Suite struct ApplicationEnvironmentTests {
    /// Blocking the lifecycle signals (for a signalfd) was inherited by every child the app
    /// started, which then ignored SIGTERM from `systemctl stop`.
    @Test func childProcessesDoNotInheritBlockedLifecycleSignals() throws {
        let app = try TestApp.launch(environment: ["TESTAPP_REPORT_CHILD_SIGNALS": "1"])
        let lines = try app.waitForOutputLine("delegate didBecomeActive")
        try app.terminate()
        let blocked = try #require(lines.first { $0.hasPrefix("child SigBlk: ") })
        let ignored = try #require(lines.first { $0.hasPrefix("child SigIgn: ") })
        for (line, prefix) in [(blocked, "child SigBlk: "), (ignored, "child SigIgn: ")] {
            let mask = try #require(UInt64(line.dropFirst(prefix.count), radix: 16))
            for signal in [SIGTERM, SIGHUP, SIGTSTP, SIGCONT] {
                #expect(mask & (1 << UInt64(signal - 1)) == 0, "\(line) has signal \(signal)")
            }
        }
    }

    @Test func infoDictionaryIsTheInfoPlistInUse() throws {
        let directory = try TemporaryDirectory()
        let plist = directory.appending("Info.plist")
        try PropertyListSerialization.data(fromPropertyList: ["ProctorAppID": "com.example.notes"], format: .binary, options: 0)
            .write(to: plist)
        let app = try TestApp.launch(infoPlist: plist.path, environment: ["TESTAPP_PRINT_INFO_KEY": "ProctorAppID"])
        try app.waitForOutputLine("info ProctorAppID=com.example.notes")
        #expect(try app.terminate() == 0)
    }
}
