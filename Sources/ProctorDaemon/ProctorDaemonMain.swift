import Glibc
import LinuxIO
import SystemdKit

/// proctord's whole life, from arguments to exit status; `main.swift` only calls this.
///
/// Order matters: signals are claimed on the main thread before any other thread exists
/// (the logger's writer is one), and READY=1 is sent only once the policy is loaded and
/// both sockets listen. STOPPING=1 goes out on every way out.
public func runProctord(arguments: [String], environment: [String: String]) -> Int32 {
    let configuration: DaemonConfiguration
    do {
        switch try DaemonConfiguration.parse(arguments, environment: environment) {
        case .help:
            print(DaemonConfiguration.usage)
            return 0
        case .version:
            print("proctord \(Daemon.version)")
            return 0
        case .run(let parsed):
            configuration = parsed
        }
    } catch {
        printError("proctord: \(error)\n")
        return 2
    }

    signal(SIGPIPE, SIG_IGN)
    let notifier = SystemdNotifier()
    let loop: EventLoop
    var daemon: Daemon?
    do {
        loop = try EventLoop()
        try loop.onSignal([SIGTERM, SIGINT, SIGHUP]) { signal in
            if signal == SIGHUP { daemon?.reload() } else { daemon?.stop(signal: signal) }
        }
    } catch {
        printError("proctord: cannot set up the event loop: \(error)\n")
        _ = try? notifier.failed(status: "cannot set up the event loop: \(error)", errno: error.rawValue)
        return 1
    }

    let target = LogTarget.Setting(rawValue: configuration.logTarget.rawValue)?.resolve() ?? .stderr
    let logger = Logger(sink: target.makeSink(syslogIdentifier: "proctord"),
                        minimumPriority: configuration.debugLogging ? .debug : .info,
                        droppedMessagesID: DaemonEvent.logMessagesDropped.messageID,
                        onFirstSinkFailure: { error in
                            // Said once: stderr is where an administrator looks when the journal
                            // stays silent. (A failing stderr sink has nowhere else to say it.)
                            guard target == .journal else { return }
                            printError("proctord: cannot log to the journal: \(error); log messages are lost "
                                       + "until it comes back (counted as logSinkFailures in proctorctl status)\n")
                        })
    // Bounded: a log sink that blocks (stderr a pipe nobody reads) must not keep proctord
    // from exiting; what is still queued after this is lost.
    defer { logger.flush(timeout: shutdownLogFlushTimeout) }
    logger.log(DaemonEvent.started.event("proctord \(Daemon.version) starting (pid \(getpid()))", [
        ("CONFIGURATION_DIRECTORY", configuration.configDirectory), ("STATE_DIRECTORY", configuration.stateDirectory),
        ("RUNTIME_DIRECTORY", configuration.runtimeDirectory),
    ]))

    do {
        daemon = try Daemon(configuration: configuration, loop: loop, logger: logger)
        try daemon?.serve()
        return 0
    } catch {
        logger.log(LogEvent(DaemonEvent.stopping.messageID, .error, "proctord failed to start: \(error)"))
        logger.flush(timeout: shutdownLogFlushTimeout)
        printError("proctord: \(error)\n")
        // STOPPING first: the status line systemd keeps is the last one, and it should say why.
        let status = "Failed to start: \(error)"
        _ = try? notifier.stopping(status: status)
        _ = try? notifier.failed(status: status, errno: error.errno)
        return error.exitStatus
    }
}

/// How long proctord waits on its way out for queued log events to reach the sink.
let shutdownLogFlushTimeout = Duration.seconds(2)

/// One line on standard error, for the administrator running proctord by hand.
func printError(_ line: String) {
    let bytes = Array((line.hasSuffix("\n") ? line : line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}
