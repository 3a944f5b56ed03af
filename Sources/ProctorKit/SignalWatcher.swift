import Dispatch
import Glibc
import LinuxIO

/// The write end of the self-pipe; the only state the signal handler touches. Set once,
/// before any handler is installed.
nonisolated(unsafe) private var signalPipeWriteEnd: Int32 = -1

/// The signal handler: async-signal-safe, it only writes the signal's number to the pipe.
private func recordSignal(_ signal: Int32) {
    let savedErrno = errno
    var byte = UInt8(truncatingIfNeeded: signal)
    _ = write(signalPipeWriteEnd, &byte, 1)
    errno = savedErrno
}

/// The single owner of the process's lifecycle signals.
///
/// A handler writes each signal's number to a pipe (the self-pipe trick) and the main queue
/// reads it. Not `signalfd`: that needs the signals blocked in every thread, and a blocked
/// mask is inherited by every child the application starts (Foundation's `Process` does not
/// reset it), which would leave them deaf to SIGTERM. Caught signals, unlike blocked ones,
/// return to their default action in a child at `exec`.
@MainActor
final class SignalWatcher {
    /// SIGTERM, SIGINT, SIGHUP, SIGTSTP and SIGCONT.
    static let lifecycleSignals: [Int32] = [SIGTERM, SIGINT, SIGHUP, SIGTSTP, SIGCONT]

    private let readEnd: Int32
    private var source: (any DispatchSourceRead)?

    /// Installs the handlers; there is one watcher per process.
    init(signals: [Int32] = SignalWatcher.lifecycleSignals) throws(SystemCallError) {
        precondition(signalPipeWriteEnd == -1, "only one SignalWatcher per process")
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw .last("pipe") }
        for end in ends {
            guard fcntl(end, F_SETFD, FD_CLOEXEC) == 0,
                  fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) == 0 else {
                let error = SystemCallError.last("fcntl")
                ends.forEach { close($0) }
                throw error
            }
        }
        readEnd = ends[0]
        signalPipeWriteEnd = ends[1]
        // A launcher may have left these blocked (Foundation's Process passes its thread's mask
        // on, and Dispatch's worker threads block nearly everything): unblock them here, so
        // the handlers run in this thread and in the threads it starts.
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in signals { sigaddset(&mask, signal) }
        let unblocked = pthread_sigmask(SIG_UNBLOCK, &mask, nil)
        guard unblocked == 0 else { throw SystemCallError(call: "pthread_sigmask", errno: Errno(rawValue: unblocked)) }
        for signal in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = recordSignal
            action.sa_flags = SA_RESTART
            sigemptyset(&action.sa_mask)
            guard sigaction(signal, &action, nil) == 0 else { throw .last("sigaction(\(signal))") }
        }
    }

    /// Calls `handler` on the main actor with each signal's number, in arrival order.
    func start(handler: @escaping @MainActor (Int32) -> Void) {
        let source = DispatchSource.makeReadSource(fileDescriptor: readEnd, queue: .main)
        let readEnd = self.readEnd
        source.setEventHandler {
            MainActor.assumeIsolated {
                for signal in Self.drain(readEnd) { handler(signal) }
            }
        }
        source.resume()
        self.source = source
    }

    /// Reads every recorded signal; the non-blocking pipe ends the loop with EAGAIN.
    private static func drain(_ descriptor: Int32) -> [Int32] {
        var signals: [Int32] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count > 0 {
                signals += buffer[..<count].map { Int32($0) }
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                return signals
            }
        }
    }
}
